"""Ed25519 signatures over each run's chain digest: who wrote an audit, provably.

`verify --sign-key FILE` signs the 32 bytes of the run's chain digest with a private key
(PEM, PKCS #8, unencrypted: `openssl genpkey -algorithm ed25519`); the run's row keeps
the signature and the public key, in hex. `check --public-key FILE` (PEM, as
`openssl pkey -pubout` writes it) verifies every run's signature with the key given,
never with the key the audit itself holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from pipeline.helpers.errors import AuditError


class KeyFileError(AuditError):
    """A key file that cannot be read, or holds no Ed25519 key of the kind asked for."""


def private_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in a PEM file, or one sentence why not."""
    key = _key(path, "private")
    assert isinstance(key, Ed25519PrivateKey)  # `_key` said why not otherwise
    return key


def public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in a PEM file, or one sentence why not."""
    key = _key(path, "public")
    assert isinstance(key, Ed25519PublicKey)
    return key


# Per kind of key: how PEM is read for it, the class it must be, and how to make one.
_KINDS: dict[str, tuple[Callable[[bytes], object], type, str]] = {
    "private": (
        lambda data: serialization.load_pem_private_key(data, password=None),
        Ed25519PrivateKey,
        "openssl genpkey -algorithm ed25519 -out KEY.pem",
    ),
    "public": (
        serialization.load_pem_public_key,
        Ed25519PublicKey,
        "openssl pkey -in KEY.pem -pubout -out KEY.pub.pem gives its public key",
    ),
}


def _key(path: Path, kind: str) -> object:
    """The key of `kind` in the PEM file at `path`: one sentence (KeyFileError) if the file
    cannot be read, holds no such key, or holds one of another algorithm than Ed25519."""
    load, wanted, how = _KINDS[kind]
    try:
        data = path.read_bytes()
    except OSError as error:
        raise KeyFileError(f"The {kind} key {path} cannot be read: {error.strerror}.") from None
    if (blocks := data.count(b"-----BEGIN ")) > 1:  # PEM readers would take the first alone
        raise KeyFileError(
            f"The file {path} holds {blocks} PEM blocks; give a file with the one {kind} key."
        )
    try:
        key = load(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        why = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise KeyFileError(
            f"The file {path} holds no {kind} key in PEM form that can be read ({why})."
        ) from None
    if not isinstance(key, wanted):
        raise KeyFileError(
            f"The key {path} is a {_kind(key)} {kind} key; audits are signed with Ed25519 ({how})."
        )
    return key


def _kind(key: object) -> str:
    return (
        type(key).__name__.removeprefix("_").replace("PrivateKey", "").replace("PublicKey", "")
        or "different"
    )


def sign(key: Ed25519PrivateKey, chain_digest: str) -> tuple[str, str]:
    """The signature of a chain digest, and the signer's public key, both in hex."""
    public = key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return key.sign(bytes.fromhex(chain_digest)).hex(), public.hex()


def signed_by(key: Ed25519PublicKey, chain_digest: str, signature: str | None) -> bool:
    """Whether `signature` is `key`'s signature of the chain digest."""
    if not signature:
        return False
    try:
        key.verify(bytes.fromhex(signature), bytes.fromhex(chain_digest))
    except (InvalidSignature, ValueError):
        return False
    return True


def fingerprint(key: Ed25519PublicKey) -> str:
    """A public key as the audit shows it: its raw bytes in hex."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def signed_by_own_key(chain_digest: str, signature: str | None, public: str | None) -> bool:
    """Whether a runs row's signature is that of the public key it keeps (hex)."""
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public or ""))
    except ValueError:
        return False
    return signed_by(key, chain_digest, signature)
