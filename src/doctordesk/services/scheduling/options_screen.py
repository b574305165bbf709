"""The clinic's doctors and locations as the choices a screen's combo offers (``screens/protocol.Option``)."""

from __future__ import annotations

from doctordesk.screens.protocol import Option
from doctordesk.services.scheduling.clinic_facts import Clinic


def doctor_options(clinic: Clinic) -> list[Option]:
    return [Option(str(i), name) for i, name in clinic.directory.doctors.items()]


def location_options(clinic: Clinic) -> list[Option]:
    return [Option(str(i), name) for i, name in clinic.location_names.items()]
