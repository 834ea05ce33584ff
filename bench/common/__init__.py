"""What several benchmarks share: where the data lives, the development
questions and their indexes, the scoring, statistics and tables, source
trees to compare, the command dispatcher of the entries that hold several."""
