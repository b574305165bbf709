"""The clinic dashboard's rules (docs/dashboard.md): the 90-day window in the clinic's zone, offered hours from the
doctors' weekly hours and exceptions, percentiles, and the figures' shape (a table every chart and CSV is drawn
from)."""
