"""Answer a question with ranked chunks: parse the query, run the legs, fuse them."""
