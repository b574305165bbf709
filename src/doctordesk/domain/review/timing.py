"""When time alone next changes a Review and Approve page (``domain/edges.py``).

The assessment reads the clock in these rules only, each turning at a moment named here:

- the requested time has passed (its start);
- an alternative is less than the lead time ahead, or beyond the booking horizon (its start minus either);
- the short-notice surcharge applies (a start minus ``SHORT_NOTICE``);
- a fee rule comes into force (its ``effective_from``);
- no policy covers a day from today on (UTC's date moves on).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from doctordesk.domain.edges import earliest, next_utc_midnight, offsets_edge
from doctordesk.domain.review.assessment import Assessment
from doctordesk.domain.review.fees import SHORT_NOTICE
from doctordesk.domain.scheduling.suggestions import LEAD_TIME


def review_edge(assessment: Assessment) -> datetime | None:
    """The first moment after the assessment's ``now`` at which assessing the same cards gives another answer."""
    facts = assessment.facts
    now = facts.now
    starts = [facts.original.start, *(c.proposal.start for c in assessment.cards if c.proposal is not None)]
    spans = (timedelta(0), LEAD_TIME, SHORT_NOTICE, facts.horizon)
    in_force = (row.effective_from for row in facts.fee_rows)
    return earliest((offsets_edge(starts, spans, now), next_utc_midnight(now), *in_force), after=now)
