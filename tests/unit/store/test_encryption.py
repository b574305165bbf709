"""The secrets box and its key: sealing hides the value, every listed key opens and the first seals, plain text
from before encryption passes through, a wrong or malformed key is a clear SecretKeyError, and the key file is made
once, readable by its owner only, and kept by every later start (docs/operations.md#secrets-at-rest)."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from doctordesk.config import Settings
from doctordesk.store.secrets.encryption import KEY_FILE, SecretBox, SecretKeyError, box_from_settings, new_key

SEED = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"


def test_a_sealed_value_hides_the_secret_and_opens_to_it():
    box = SecretBox([new_key()], source="test")
    sealed = box.seal(SEED)
    assert sealed.startswith("fernet:") and SEED not in sealed
    assert sealed != box.seal(SEED)  # a fresh IV each time
    assert box.open(sealed) == SEED and box.is_current(sealed)


def test_a_value_stored_before_encryption_is_read_as_it_is():
    box = SecretBox([new_key()], source="test")
    assert box.open(SEED) == SEED and box.open("whsec_abc") == "whsec_abc" and not box.is_current(SEED)


def test_every_listed_key_opens_and_only_the_first_seals():
    old, new = new_key(), new_key()
    under_old = SecretBox([old], source="before").seal(SEED)
    rotated = SecretBox([new, old], source="during")
    assert rotated.open(under_old) == SEED and not rotated.is_current(under_old)
    assert SecretBox([new], source="after").open(rotated.seal(SEED)) == SEED


def test_a_value_under_an_unlisted_key_is_a_key_error_naming_the_source():
    sealed = SecretBox([new_key()], source="elsewhere").seal(SEED)
    with pytest.raises(SecretKeyError, match="DOCTORDESK_SECRETS_KEY does not list"):
        SecretBox([new_key()], source="DOCTORDESK_SECRETS_KEY").open(sealed)
    with pytest.raises(SecretKeyError, match="does not list"):
        SecretBox([new_key()], source="x").open("fernet:not-a-token")


@pytest.mark.parametrize("keys", [[], ["short"], ["x" * 44]])
def test_a_missing_or_malformed_key_is_refused(keys):
    with pytest.raises(SecretKeyError, match="test"):
        SecretBox(keys, source="test")


def test_the_key_file_is_made_once_for_the_owner_only_and_kept(tmp_path: Path):
    settings = Settings(data_dir=tmp_path / "data")
    sealed = box_from_settings(settings).seal(SEED)
    path = tmp_path / "data" / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert box_from_settings(settings).open(sealed) == SEED  # the next start reads the same key
    assert [p.name for p in path.parent.iterdir()] == [KEY_FILE]  # no draft left behind


def test_processes_starting_together_end_with_one_key(tmp_path: Path):
    settings = Settings(data_dir=tmp_path)
    boxes: list[SecretBox] = []
    threads = [threading.Thread(target=lambda: boxes.append(box_from_settings(settings))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sealed = boxes[0].seal(SEED)
    assert all(b.open(sealed) == SEED for b in boxes)


def test_the_variable_overrides_the_key_file_and_lists_keys_for_rotation(tmp_path: Path):
    first, second = new_key(), new_key()
    box = box_from_settings(Settings(data_dir=tmp_path, secrets_key=f"{first}, {second}"))
    assert not (tmp_path / KEY_FILE).exists()
    assert SecretBox([first], source="first").open(box.seal(SEED)) == SEED
    assert box.open(SecretBox([second], source="second").seal(SEED)) == SEED


def test_a_key_file_others_can_read_is_warned_about(tmp_path: Path, caplog):
    (tmp_path / KEY_FILE).write_text(new_key() + "\n")
    (tmp_path / KEY_FILE).chmod(0o644)
    box_from_settings(Settings(data_dir=tmp_path))
    assert "chmod 600" in caplog.text
