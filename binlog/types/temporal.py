"""DATE, legacy TIMESTAMP/DATETIME/TIME (7/12/11) and the MySQL 5.6 *2 types (17/18/19).

Layouts: docs/binlog-formats.md sections 6-8, from MariaDB sql/field.cc, sql/sql_type.cc,
include/my_time.h and MySQL sql/compat56.cc / mysys/my_time.cc.

Values are strings as the server prints them:
- DATE 'YYYY-MM-DD' (zero and partial dates kept: '0000-00-00', '2022-00-00').
- DATETIME / TIMESTAMP 'YYYY-MM-DD hh:mm:ss' plus '.' and exactly N fraction digits when
  N = col.precision > 0.  TIMESTAMP is converted to col.tz (None = UTC); epoch 0 with a
  zero fraction is the zero date '0000-00-00 00:00:00[.000..]'.
- TIME '[-]hh:mm:ss[.f..]' with at least two hour digits ('-838:59:59.99').

Legacy N = 0 forms are little-endian (Field_timestamp0 / Field_datetime0 / Field_time0);
legacy N = 1..6 ("hires", MariaDB 5.3 format) are big-endian and are only reached through
decoder_for, because TABLE_MAP does not carry N for types 7/12/11.
"""
from __future__ import annotations

from datetime import date, datetime, timezone

# the size tables: one copy, shared with the compiled walks (binlog/_column_kinds.h)
from ..column_kinds import (
    DATETIME_HIRES_BYTES,
    FSP_BYTES as _FSP_BYTES,
    FSP_MULT as _FSP_MULT,
    SEC_PART_BYTES,
    TIME_HIRES_BYTES,
)
from ._common import malformed, truncated

_DIV = tuple(10 ** (6 - n) for n in range(7))      # usec -> N digits
_POW = tuple(10 ** n for n in range(7))
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()

TIME_MAX_VALUE_SECONDS = 838 * 3600 + 59 * 60 + 59
# zero_point(N) = (TIME_MAX_VALUE_SECONDS + 1) * 10^N
TIME_ZERO_POINT = tuple((TIME_MAX_VALUE_SECONDS + 1) * 10 ** n for n in range(7))


def _frac(usec: int, n: int) -> str:
    if n == 0:
        return ""
    return f".{usec // _DIV[n]:0{n}d}"


def _precision(col) -> int:
    n = col.precision
    if n is None or not 0 <= n <= 6:
        raise malformed(f"invalid fractional precision {n!r}")
    return n


def format_datetime(year, month, day, hour, minute, second, usec, n) -> str:
    return (f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
            + _frac(usec, n))


def format_time(negative, hours, minutes, seconds, usec, n) -> str:
    return (f"{'-' if negative else ''}{hours:02d}:{minutes:02d}:{seconds:02d}"
            + _frac(usec, n))


def format_timestamp(seconds: int, usec: int, n: int, tz, offset: bool = False) -> str:
    """Epoch seconds + usec in tz (None = UTC); 0/0 is the zero date.  ``offset``: ISO
    8601 with the offset tz has at that instant (DST included: the zone's rules, as the
    server's CONVERT_TZ), ``2024-10-27T02:30:00.5+01:00``; the zero date stays as it is
    (no instant has it)."""
    if seconds == 0 and usec == 0:
        return "0000-00-00 00:00:00" + _frac(0, n)
    if offset:
        return _with_offset(seconds, usec, n, tz)
    try:
        if tz is None:
            days, rem = divmod(seconds, 86400)
            d = date.fromordinal(_EPOCH_ORDINAL + days)
            hour, rem = divmod(rem, 3600)
            minute, second = divmod(rem, 60)
            return format_datetime(d.year, d.month, d.day, hour, minute, second, usec, n)
        dt = datetime.fromtimestamp(seconds, timezone.utc).astimezone(tz)
    except (ValueError, OverflowError, OSError) as exc:
        raise malformed(f"TIMESTAMP {seconds} out of range") from exc
    return format_datetime(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, usec, n)


def _with_offset(seconds: int, usec: int, n: int, tz) -> str:
    try:
        dt = datetime.fromtimestamp(seconds, timezone.utc).astimezone(tz or timezone.utc)
    except (ValueError, OverflowError, OSError) as exc:
        raise malformed(f"TIMESTAMP {seconds} out of range") from exc
    delta = dt.utcoffset()
    minutes = int(delta.total_seconds()) // 60 if delta is not None else 0
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    text = format_datetime(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, usec, n)
    return f"{text[:10]}T{text[11:]}{sign}{hours:02d}:{mins:02d}"


# --- DATE (10) --------------------------------------------------------------------------

def decode_date(buf, pos, end, col):
    """3 bytes LE: day + month*32 + year*512 (Field_newdate)."""
    if end - pos < 3:
        raise truncated(3, "DATE", end - pos)
    v = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
    return f"{v >> 9:04d}-{(v >> 5) & 15:02d}-{v & 31:02d}", pos + 3


# --- legacy N = 0 (little-endian) -------------------------------------------------------

def decode_timestamp0(buf, pos, end, col):
    """TIMESTAMP(0), type 7: u32 LE epoch seconds."""
    if end - pos < 4:
        raise truncated(4, "TIMESTAMP", end - pos)
    seconds = int.from_bytes(buf[pos:pos + 4], "little")
    return format_timestamp(seconds, 0, 0, col.tz, col.ts_offset), pos + 4


def decode_datetime0(buf, pos, end, col):
    """DATETIME(0), type 12: u64 LE YYYYMMDDhhmmss."""
    if end - pos < 8:
        raise truncated(8, "DATETIME", end - pos)
    v = int.from_bytes(buf[pos:pos + 8], "little")
    d, t = divmod(v, 1000000)
    year, md = divmod(d, 10000)
    month, day = divmod(md, 100)
    hour, ms = divmod(t, 10000)
    minute, second = divmod(ms, 100)
    if year > 9999:
        raise malformed(f"DATETIME value {v} out of range")
    return format_datetime(year, month, day, hour, minute, second, 0, 0), pos + 8


def decode_time0(buf, pos, end, col):
    """TIME(0), type 11: 3 bytes LE signed +-(hh*10000 + mm*100 + ss)."""
    if end - pos < 3:
        raise truncated(3, "TIME", end - pos)
    v = int.from_bytes(buf[pos:pos + 3], "little", signed=True)
    negative = v < 0
    hours, ms = divmod(-v if negative else v, 10000)
    minutes, seconds = divmod(ms, 100)
    return format_time(negative, hours, minutes, seconds, 0, 0), pos + 3


# --- legacy N = 1..6 (MariaDB hires, big-endian) ----------------------------------------

def decode_timestamp_hires(buf, pos, end, col):
    """u32 BE epoch seconds, then usec div 10^(6-N) in SEC_PART_BYTES[N] bytes BE."""
    n = _precision(col)
    size = 4 + SEC_PART_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"TIMESTAMP({n})", end - pos)
    seconds = int.from_bytes(buf[pos:pos + 4], "big")
    part = int.from_bytes(buf[pos + 4:pos + size], "big")
    if part >= _POW[n]:
        raise malformed(f"TIMESTAMP({n}) fraction {part} has more than {n} digits")
    return format_timestamp(seconds, part * _DIV[n], n, col.tz, col.ts_offset), pos + size


def decode_datetime_hires(buf, pos, end, col):
    """shift(((((((Y*13+M)*32+D)*24+h)*60+m)*60+s)*10^6+us), N) as unsigned BE."""
    n = _precision(col)
    size = DATETIME_HIRES_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"DATETIME({n})", end - pos)
    v = int.from_bytes(buf[pos:pos + size], "big") * _DIV[n]
    v, usec = divmod(v, 1000000)
    v, second = divmod(v, 60)
    v, minute = divmod(v, 60)
    v, hour = divmod(v, 24)
    v, day = divmod(v, 32)
    year, month = divmod(v, 13)
    if year > 9999:
        raise malformed(f"DATETIME({n}) year {year} out of range")
    return format_datetime(year, month, day, hour, minute, second, usec, n), pos + size


def decode_time_hires(buf, pos, end, col):
    """shift(+-(((h*60+m)*60+s)*10^6+us), N) + zero_point(N) as unsigned BE."""
    n = _precision(col)
    size = TIME_HIRES_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"TIME({n})", end - pos)
    v = (int.from_bytes(buf[pos:pos + size], "big") - TIME_ZERO_POINT[n]) * _DIV[n]
    negative = v < 0
    secs, usec = divmod(-v if negative else v, 1000000)
    if secs > TIME_MAX_VALUE_SECONDS:
        raise malformed(f"TIME({n}) value out of range")
    hours, rem = divmod(secs, 3600)
    minutes, seconds = divmod(rem, 60)
    return format_time(negative, hours, minutes, seconds, usec, n), pos + size


# --- MySQL 5.6 formats (sql/compat56.cc) ------------------------------------------------

def decode_timestamp2(buf, pos, end, col):
    """u32 BE epoch seconds + fraction (1 byte hundredths / 2 bytes BE 1e-4 s / 3 bytes usec)."""
    n = _precision(col)
    size = 4 + _FSP_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"TIMESTAMP({n})", end - pos)
    seconds = int.from_bytes(buf[pos:pos + 4], "big")
    usec = int.from_bytes(buf[pos + 4:pos + size], "big") * _FSP_MULT[n] if n else 0
    if usec >= 1000000:
        raise malformed(f"TIMESTAMP({n}) fraction out of range")
    return format_timestamp(seconds, usec, n, col.tz, col.ts_offset), pos + size


def decode_datetime2(buf, pos, end, col):
    """40-bit BE (intpart + 0x8000000000), intpart = ((Y*13+M)<<22)|(D<<17)|(h<<12)|(m<<6)|s."""
    n = _precision(col)
    size = 5 + _FSP_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"DATETIME({n})", end - pos)
    intpart = int.from_bytes(buf[pos:pos + 5], "big") - 0x8000000000
    usec = 0
    if n:
        usec = int.from_bytes(buf[pos + 5:pos + size], "big", signed=True) * _FSP_MULT[n]
    if intpart < 0 or not 0 <= usec < 1000000:
        raise malformed(f"negative or out-of-range DATETIME({n}) value")
    ymd = intpart >> 17
    ym = ymd >> 5
    hms = intpart & 0x1FFFF
    return format_datetime(ym // 13, ym % 13, ymd & 31, hms >> 12, (hms >> 6) & 63, hms & 63,
                           usec, n), pos + size


def decode_time2(buf, pos, end, col):
    """hms = (h<<12)|(m<<6)|s; packed = +-((hms<<24) + usec); see my_time_packed_from_binary."""
    n = _precision(col)
    size = 3 + _FSP_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"TIME({n})", end - pos)
    if n >= 5:
        packed = int.from_bytes(buf[pos:pos + 6], "big") - 0x800000000000
    else:
        intpart = int.from_bytes(buf[pos:pos + 3], "big") - 0x800000
        frac = 0
        if n:
            frac = int.from_bytes(buf[pos + 3:pos + size], "big")
            if intpart < 0 and frac:
                intpart += 1
                frac -= 0x100 if n <= 2 else 0x10000
        packed = (intpart << 24) + frac * _FSP_MULT[n]
    negative = packed < 0
    if negative:
        packed = -packed
    hms = packed >> 24
    usec = packed & 0xFFFFFF
    if usec >= 1000000:
        raise malformed(f"TIME({n}) fraction out of range")
    return format_time(negative, (hms >> 12) & 0x3FF, (hms >> 6) & 63, hms & 63, usec, n), pos + size
