"""Review and Approve: the assessment, coverage rules and fees."""
