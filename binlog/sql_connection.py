"""PyMySQL connections (a replay target, ``--schema-from``, ``verify-rows --against``)
under the live source's password rules (``binlog.protocol.auth``).

PyMySQL answers whatever authentication method a server asks for: it sends the password
in clear to ``mysql_clear_password`` and ``dialog``, and for the full authentication of
``caching_sha2_password`` / ``sha256_password`` without TLS it asks the server for its
RSA key and encrypts the password with it, so the server reads it.  ``connect`` gives a
PyMySQL connection that refuses both unless the channel is secure (TLS with a verified
certificate, or a unix socket) or the user allowed it: the key must be the user's
(``?server_public_key=FILE``), clear text needs ``?allow_cleartext_password=1``.
"""
from __future__ import annotations

from typing import Any

from .errors import ServerAccessError
from .user_values import pymysql_kwargs

_CLEARTEXT = (b"mysql_clear_password", b"dialog")
_guarded: Any = None


def connect(kw: dict, **extra) -> Any:
    """``pymysql.connect(**kw, **extra)`` with the rules above; ``kw``: a parsed DSN."""
    allow = bool(kw.get("allow_cleartext_password"))
    return _connection_class()(allow_cleartext_password=allow, **pymysql_kwargs(kw), **extra)


def _connection_class():
    global _guarded
    if _guarded is None:
        _guarded = _build()
    return _guarded


def _build():
    import pymysql

    class GuardedConnection(pymysql.connections.Connection):
        shared_tls = None

        def _create_ssl_ctx(self, sslp):
            """One TLS context for the connections of a run that give no TLS options
            (PyMySQL's "preferred" mode makes one per connection, 15-20 ms of CPU loading
            the system's CA certificates: apply --workers 64 opens 65)."""
            if sslp != {}:          # the DSN's own TLS options: a context of their own
                return super()._create_ssl_ctx(sslp)
            cls = type(self)
            if cls.shared_tls is None:
                cls.shared_tls = super()._create_ssl_ctx(sslp)
            return cls.shared_tls

        def __init__(self, *args, allow_cleartext_password: bool = False, **kw):
            self._allow_cleartext = allow_cleartext_password
            self._users_key = kw.get("server_public_key")
            self._guard = False
            super().__init__(*args, defer_connect=True, **kw)
            self._guard = True
            self.connect()

        @property
        def server_public_key(self):
            return self.__dict__.get("_server_key")

        @server_public_key.setter
        def server_public_key(self, value):
            # PyMySQL stores the key the server sent here before encrypting with it.
            if self.__dict__.get("_guard") and value and value != self._users_key \
                    and self.password and not self._secure_channel():
                raise ServerAccessError(
                    f"{self.host}: the server asks for the password itself (full authentication) "
                    f"over a connection that is not secure, encrypted with a key it supplies: "
                    f"refused", hint="connect over TLS with a verified certificate (?ssl_ca=FILE) "
                                     "or a unix socket, or give ?server_public_key=FILE")
            self.__dict__["_server_key"] = value

        def set_multi_statements(self, on: bool) -> None:
            """COM_SET_OPTION MYSQL_OPTION_MULTI_STATEMENTS_ON (0) / _OFF (1): whether the
            server splits a COM_QUERY at ``;`` (sql_parse.cc dispatch_command, COM_SET_OPTION
            sets or clears CLIENT_MULTI_STATEMENTS in the session's capabilities).  The reply
            is EOF, or OK where EOF is deprecated; an ERR raises as any reply does."""
            import struct

            from pymysql.constants import COMMAND

            self._execute_command(COMMAND.COM_SET_OPTION, struct.pack("<H", 0 if on else 1))
            reply = self._read_packet()
            if not (reply.is_eof_packet() or reply.is_ok_packet()):
                raise ServerAccessError(f"{self.host}: an unexpected reply to COM_SET_OPTION",
                                        code=None)

        def _secure_channel(self) -> bool:
            import ssl

            context = getattr(self, "ctx", None)
            return bool(self.unix_socket) or (
                bool(getattr(self, "_secure", False)) and context is not None
                and context.verify_mode == ssl.CERT_REQUIRED)

        def _process_auth(self, plugin_name, auth_packet, handler=None):
            name = plugin_name if isinstance(plugin_name, bytes) else str(plugin_name).encode()
            if name in _CLEARTEXT and self.password and not (self._allow_cleartext
                                                             or self._secure_channel()):
                raise ServerAccessError(
                    f"{self.host}: the server asks for the password in clear text "
                    f"({name.decode('ascii', 'replace')}) over a connection that is not secure; "
                    f"refused", hint="connect over TLS with a verified certificate (?ssl_ca=FILE) "
                                     "or a unix socket, or accept the risk with "
                                     "?allow_cleartext_password=1 in the DSN")
            return super()._process_auth(plugin_name, auth_packet, handler)

    return GuardedConnection
