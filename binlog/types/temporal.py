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
    year, month, day, hour, minute, second = _datetime0_parts(buf, pos)
    return format_datetime(year, month, day, hour, minute, second, 0, 0), pos + 8


def _datetime0_parts(buf, pos) -> tuple[int, int, int, int, int, int]:
    """(Y, M, D, h, m, s) of a DATETIME(0): u64 LE YYYYMMDDhhmmss."""
    v = int.from_bytes(buf[pos:pos + 8], "little")
    d, t = divmod(v, 1000000)
    year, md = divmod(d, 10000)
    month, day = divmod(md, 100)
    hour, ms = divmod(t, 10000)
    minute, second = divmod(ms, 100)
    if year > 9999:
        raise malformed(f"DATETIME value {v} out of range")
    return year, month, day, hour, minute, second


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


# --- encoders: the mirror of the decoders above -----------------------------------------
#
# ``encode(value, col) -> bytes`` takes what the decoder of the same type gives (the
# server's text form, TIMESTAMP in UTC) and writes the bytes the server writes for it:
# decode(encode(v)) == v.  Layouts as above: MariaDB sql/field.cc (Field_*0::store,
# Field_*_hires::store_TIME), MySQL/MariaDB sql/compat56.cc (my_*_packed_to_binary).

def _parse_datetime(text: str, what: str) -> tuple[int, int, int, int, int, int, int]:
    """'YYYY-MM-DD hh:mm:ss[.f..]' -> (Y, M, D, h, m, s, usec)."""
    try:
        if len(text) < 19 or text[4] != "-" or text[7] != "-" or text[10] != " ":
            raise ValueError(text)
        usec = int(text[20:].ljust(6, "0")) if len(text) > 20 and text[19] == "." else 0
        if len(text) > 19 and text[19] != ".":
            raise ValueError(text)
        return (int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]),
                int(text[14:16]), int(text[17:19]), usec)
    except ValueError:
        raise malformed(f"{what} value {text!r} is not 'YYYY-MM-DD hh:mm:ss[.f]'") from None


def _parse_time(text: str) -> tuple[bool, int, int]:
    """'[-]h..h:mm:ss[.f..]' -> (negative, seconds, usec)."""
    negative = text.startswith("-")
    body = text[1:] if negative else text
    try:
        clock, _, frac = body.partition(".")
        hours, minutes, seconds = clock.split(":")
        if len(minutes) != 2 or len(seconds) != 2 or len(frac) > 6 or int(minutes) > 59 \
                or int(seconds) > 59:
            raise ValueError(text)
        secs = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
        return negative, secs, int(frac.ljust(6, "0")) if frac else 0
    except ValueError:
        raise malformed(f"TIME value {text!r} is not '[-]hh:mm:ss[.f]'") from None


def _epoch(text: str, n: int) -> tuple[int, int]:
    """A UTC TIMESTAMP text -> (epoch seconds, usec); the zero date is (0, 0)."""
    year, month, day, hour, minute, second, usec = _parse_datetime(text, f"TIMESTAMP({n})")
    if year == month == day == 0:
        return 0, usec
    try:
        days = date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        raise malformed(f"TIMESTAMP({n}) value {text!r} is not a date") from None
    seconds = days * 86400 + hour * 3600 + minute * 60 + second
    if not 0 <= seconds <= 0xFFFFFFFF:
        raise malformed(f"TIMESTAMP({n}) value {text!r} out of range")
    return seconds, usec


def _utc_only(col) -> None:
    if col.tz is not None or col.ts_offset:
        raise malformed("TIMESTAMP values are encoded from UTC text only")


def _usec_for(usec: int, n: int, what: str) -> int:
    if usec % _DIV[n]:
        raise malformed(f"{what} fraction .{usec:06d} has more than {n} digits")
    return usec


def encode_date(value: str, col) -> bytes:
    year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    return (year << 9 | month << 5 | day).to_bytes(3, "little")


def encode_timestamp0(value: str, col) -> bytes:
    _utc_only(col)
    seconds, usec = _epoch(value, 0)
    _usec_for(usec, 0, "TIMESTAMP")
    return seconds.to_bytes(4, "little")


def encode_datetime0(value: str, col) -> bytes:
    year, month, day, hour, minute, second, usec = _parse_datetime(value, "DATETIME")
    _usec_for(usec, 0, "DATETIME")
    packed = ((year * 100 + month) * 100 + day) * 1000000 + (hour * 100 + minute) * 100 + second
    return packed.to_bytes(8, "little")


def encode_time0(value: str, col) -> bytes:
    negative, secs, usec = _parse_time(value)
    _usec_for(usec, 0, "TIME")
    if secs > TIME_MAX_VALUE_SECONDS:
        raise malformed(f"TIME value {value!r} out of range")
    hours, rem = divmod(secs, 3600)
    v = hours * 10000 + rem // 60 * 100 + rem % 60
    return (-v if negative else v).to_bytes(3, "little", signed=True)


def encode_timestamp_hires(value: str, col) -> bytes:
    n = _precision(col)
    _utc_only(col)
    seconds, usec = _epoch(value, n)
    part = _usec_for(usec, n, f"TIMESTAMP({n})") // _DIV[n]
    return seconds.to_bytes(4, "big") + part.to_bytes(SEC_PART_BYTES[n], "big")


def encode_datetime_hires(value: str, col) -> bytes:
    n = _precision(col)
    year, month, day, hour, minute, second, usec = _parse_datetime(value, f"DATETIME({n})")
    packed = (((((year * 13 + month) * 32 + day) * 24 + hour) * 60 + minute) * 60 + second) \
        * 1000000 + _usec_for(usec, n, f"DATETIME({n})")
    return (packed // _DIV[n]).to_bytes(DATETIME_HIRES_BYTES[n], "big")


def encode_time_hires(value: str, col) -> bytes:
    n = _precision(col)
    negative, secs, usec = _parse_time(value)
    packed = secs * 1000000 + _usec_for(usec, n, f"TIME({n})")
    if secs > TIME_MAX_VALUE_SECONDS:
        raise malformed(f"TIME({n}) value {value!r} out of range")
    shifted = (-packed if negative else packed) // _DIV[n] + TIME_ZERO_POINT[n]
    return shifted.to_bytes(TIME_HIRES_BYTES[n], "big")


def _fsp_fraction(usec: int, n: int) -> bytes:
    """The fraction of the *2 types (my_*_packed_to_binary): 1 byte of hundredths,
    2 bytes BE of 1e-4 s, or 3 bytes BE of usec, by fsp; a negative TIME's fraction is
    stored as C's two's complement byte/short."""
    if n == 0:
        return b""
    size = _FSP_BYTES[n]
    return (usec // _FSP_MULT[n]).to_bytes(size, "big", signed=usec < 0)


def encode_timestamp2(value: str, col) -> bytes:
    n = _precision(col)
    _utc_only(col)
    seconds, usec = _epoch(value, n)
    return seconds.to_bytes(4, "big") + _fsp_fraction(_usec_for(usec, n, f"TIMESTAMP({n})"), n)


def encode_datetime2(value: str, col) -> bytes:
    n = _precision(col)
    year, month, day, hour, minute, second, usec = _parse_datetime(value, f"DATETIME({n})")
    if not (0 <= year <= 9999 and 0 <= month <= 12 and 0 <= day <= 31 and hour < 24
            and minute < 60 and second < 60):
        raise malformed(f"DATETIME({n}) value {value!r} out of range")
    return datetime2_bytes(year * 13 + month, day, hour, minute, second,
                           _usec_for(usec, n, f"DATETIME({n})"), n)


def datetime2_bytes(ym: int, day: int, hour: int, minute: int, second: int, usec: int,
                    n: int) -> bytes:
    """TIME_to_longlong_datetime_packed + my_datetime_packed_to_binary: 40 bits BE of
    ((Y*13+M)<<22 | D<<17 | h<<12 | m<<6 | s) + 0x8000000000, then the fraction."""
    intpart = (ym << 22) | (day << 17) | (hour << 12) | (minute << 6) | second
    return (intpart + 0x8000000000).to_bytes(5, "big") + _fsp_fraction(usec, n)


def encode_time2(value: str, col) -> bytes:
    n = _precision(col)
    negative, secs, usec = _parse_time(value)
    if secs // 3600 > 1023:
        raise malformed(f"TIME({n}) value {value!r} out of range")
    return time2_bytes(negative, secs, _usec_for(usec, n, f"TIME({n})"), n)


def time2_bytes(negative: bool, secs: int, usec: int, n: int) -> bytes:
    """TIME_to_longlong_time_packed then my_time_packed_to_binary (sql/compat56.cc): the
    integer part is ``packed >> 24`` (an arithmetic shift), the fraction C's ``%``."""
    hours, rem = divmod(secs, 3600)
    packed = ((hours << 12 | (rem // 60) << 6 | rem % 60) << 24) + usec
    if negative:
        packed = -packed
    if n >= 5:
        return (packed + 0x800000000000).to_bytes(6, "big")
    frac = -(-packed % (1 << 24)) if packed < 0 else packed % (1 << 24)
    return ((packed >> 24) + 0x800000).to_bytes(3, "big") + _fsp_fraction(frac, n)


# --- legacy bytes straight to *2 bytes ------------------------------------------------
#
# ``transcode(buf, pos, end, n) -> (bytes, new_pos)``: what decode (legacy, N) then encode
# (*2, fsp N) give, without the text in between (binlog rewrite's hot path; the unit
# tests hold them equal to that composition).  Same checks, same typed errors as the
# legacy decoders.

def transcode_timestamp(buf, pos, end, n):
    """The seconds are BE in both but N = 0's (LE); the fraction of an even N has the
    same bytes, an odd N's is one digit short of the *2 unit (sql/compat56.cc)."""
    if n == 0:
        if end - pos < 4:
            raise truncated(4, "TIMESTAMP", end - pos)
        return int.from_bytes(buf[pos:pos + 4], "little").to_bytes(4, "big"), pos + 4
    size = 4 + SEC_PART_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"TIMESTAMP({n})", end - pos)
    part = int.from_bytes(buf[pos + 4:pos + size], "big")
    if part >= _POW[n]:
        raise malformed(f"TIMESTAMP({n}) fraction {part} has more than {n} digits")
    if n % 2 == 0:
        return bytes(buf[pos:pos + size]), pos + size
    return bytes(buf[pos:pos + 4]) + (part * 10).to_bytes(_FSP_BYTES[n], "big"), pos + size


def transcode_datetime(buf, pos, end, n):
    if n == 0:
        if end - pos < 8:
            raise truncated(8, "DATETIME", end - pos)
        year, month, day, hour, minute, second = _datetime0_parts(buf, pos)
        if month > 12 or day > 31 or hour > 23 or minute > 59 or second > 59:
            raise malformed(f"DATETIME value {bytes(buf[pos:pos + 8]).hex()} out of range")
        return datetime2_bytes(year * 13 + month, day, hour, minute, second, 0, 0), pos + 8
    size = DATETIME_HIRES_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"DATETIME({n})", end - pos)
    v, usec = divmod(int.from_bytes(buf[pos:pos + size], "big") * _DIV[n], 1000000)
    v, second = divmod(v, 60)
    v, minute = divmod(v, 60)
    ym, hour = divmod(v, 24)
    ym, day = divmod(ym, 32)
    if ym // 13 > 9999:
        raise malformed(f"DATETIME({n}) year {ym // 13} out of range")
    return datetime2_bytes(ym, day, hour, minute, second, usec, n), pos + size


def transcode_time(buf, pos, end, n):
    if n == 0:
        if end - pos < 3:
            raise truncated(3, "TIME", end - pos)
        v = int.from_bytes(buf[pos:pos + 3], "little", signed=True)
        hours, ms = divmod(-v if v < 0 else v, 10000)
        minutes, seconds = divmod(ms, 100)
        if minutes > 59 or seconds > 59 or hours > 1023:
            raise malformed(f"TIME value {v} out of range")
        return time2_bytes(v < 0, hours * 3600 + minutes * 60 + seconds, 0, 0), pos + 3
    size = TIME_HIRES_BYTES[n]
    if end - pos < size:
        raise truncated(size, f"TIME({n})", end - pos)
    v = (int.from_bytes(buf[pos:pos + size], "big") - TIME_ZERO_POINT[n]) * _DIV[n]
    secs, usec = divmod(-v if v < 0 else v, 1000000)
    if secs > TIME_MAX_VALUE_SECONDS:
        raise malformed(f"TIME({n}) value out of range")
    return time2_bytes(v < 0, secs, usec, n), pos + size
