"""The index over time: throughput and size, freshness after edits and branch switches, the history
leg's costs, a second branch built from its sibling."""
