"""The doctors' calendar feeds: the secret address, its entries and the iCalendar file."""
