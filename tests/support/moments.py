"""The moments the suite runs at (docs/development.md#the-moment-a-test-runs-at).

No test may assume a weekday or an hour of the machine's clock: a test that depends on the date or the hour runs
at a moment it states, in process (a ``FixedClock``) or in the processes it starts (``LiveServer(at=…)``,
``live.moment_env``); a test about "now" itself keeps the system clock and must pass at any moment.
"""

from __future__ import annotations

from datetime import UTC, datetime

# The suite's Monday morning (08:00 in Berlin, 07:00 in London): the demo clinic's relative dates are stable against
# it, its week has five working days ahead, and the booking screen's first free times are that morning's.
MONDAY_MORNING = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
