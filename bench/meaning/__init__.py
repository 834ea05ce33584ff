"""Meaning (issue 37): the development set of functions asked by their doc comments, and the table of
related words distilled from the bundled model."""
