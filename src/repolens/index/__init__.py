"""Keep an index equal to the repository: discover -> diff -> chunk -> store, then embed."""
