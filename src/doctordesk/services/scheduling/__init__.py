"""What scheduling decisions read from storage: clinic facts, schedule locks and busy times."""
