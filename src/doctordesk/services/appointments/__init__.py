"""The appointment list: reading appointments with the viewer's rights, its search and notices."""
