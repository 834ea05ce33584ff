"""What an agent pays: the tool list it loads up front, and replies in agent-style sessions."""
