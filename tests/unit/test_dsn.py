"""DSN parsing (binlog.user_values): one parser for --schema-from, --from and --to, and
no message of it ever shows the password."""
from __future__ import annotations

import pytest

from binlog.errors import UsageError
from binlog.user_values import parse_dsn, redact_dsn
from schema_store.errors import SchemaError
from schema_store.live import parse_dsn as store_parse_dsn


def test_fields_and_tls_parameters():
    kw = parse_dsn("mariadb://u:p%40ss@h:3307/db?ssl_ca=/ca.pem&ssl_verify_cert=1&read_timeout=5")
    assert kw == {"user": "u", "password": "p@ss", "host": "h", "port": 3307, "database": "db",
                  "ssl_ca": "/ca.pem", "ssl_verify_cert": True, "read_timeout": 5.0}


@pytest.mark.parametrize("dsn", ["http://u:s3cr3t@h/", "mysql://u:s3cr3t@h:99999/",
                                 "mysql://u:s3cr3t@h/?unknown=1",
                                 "mysql://u:s3cr3t@h/?read_timeout=soon"])
def test_bad_dsn_messages_never_show_the_password(dsn):
    with pytest.raises(UsageError) as info:
        parse_dsn(dsn)
    assert "s3cr3t" not in str(info.value)
    with pytest.raises(SchemaError) as info:        # --schema-from's parser is the same one
        store_parse_dsn(dsn)
    assert "s3cr3t" not in str(info.value)


def test_redact():
    assert redact_dsn("mysql://u:pw@h:1/db?x=1") == "mysql://u:***@h:1/db?x=1"
    assert redact_dsn("mysql://u@h/") == "mysql://u@h/"
