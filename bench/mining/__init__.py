"""The training questions' miner (``bench.mine_questions``): which files are source, commits and
their questions, definitions, and the snapshots questions are asked at."""
