"""Push devices: every authenticated call from the app carries its device id, platform and current push token;
the device remembers the latest token and the user last active on it (only that user is notified there).

Writes are skipped while nothing changed and the last write is recent, so polls stay cheap.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from doctordesk.caches.devices import DeviceCache, DeviceHeaders
from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.services.uow import unit_of_work
from doctordesk.store.realtime_tables import Device

PLATFORMS = ("ios", "android")
MAX_TOKEN_CHARS = 512
MAX_DEVICE_ID_CHARS = 128

__all__ = ["DeviceCache", "DeviceHeaders", "record"]


async def record(rt: Runtime, actor: Actor, headers: DeviceHeaders) -> None:
    """Upsert the device: its latest token and platform, and ``actor`` as the user last active on it."""
    cache = rt.device_cache
    if cache.fresh(headers, actor.user_id):
        return
    now = rt.clock.now()
    for _ in range(2):  # a concurrent first call from the same device may win the insert: then update
        try:
            async with unit_of_work(rt) as uow:
                session = uow.session
                device = await session.scalar(select(Device).where(Device.device_key == headers.device_key))
                if device is None:
                    session.add(
                        Device(
                            device_key=headers.device_key,
                            platform=headers.platform,
                            push_token=headers.token,
                            user_id=actor.user_id,
                            last_active_at=now,
                            token_updated_at=now,
                        )
                    )
                else:
                    if headers.token is not None and device.push_token != headers.token:
                        device.push_token = headers.token
                        device.token_updated_at = now
                    device.platform = headers.platform
                    device.user_id = actor.user_id
                    device.last_active_at = now
            break
        except IntegrityError:
            continue
    cache.remember(headers, actor.user_id)
