"""Review and Approve: the screen, decisions and the patient's answer to the offers."""
