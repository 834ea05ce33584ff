"""Operating an index: status, doctor, client set-up."""
