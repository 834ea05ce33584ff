"""An organisation in one PostgreSQL database: hundreds of indexes, and the search across them."""
