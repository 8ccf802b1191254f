"""Collation ids -> character sets -> Python codecs, for decoding text columns.

COLLATIONS was generated once from a live MariaDB 10.11.19 server::

    SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY
    WHERE ID IS NOT NULL

(1242 ids, including the 10.10+ uca1400 ids from 2048 up), plus the MySQL 8 ids that
MariaDB does not use (MYSQL_ONLY_COLLATIONS: 76 utf8mb3_tolower_ci, 248-250 gb18030,
255-323 the utf8mb4 *_0900_* collations; MySQL strings/ctype-*.cc).  The two sets do not
overlap.

codec_for_collation returns a codec name usable with ``bytes.decode(name)`` (strict), or
None when the bytes must stay bytes: the binary collation 63, unknown ids, and the
charsets Python has no codec for (armscii8, geostd8, keybcs2, dec8, hp8, swe7; the writer
then outputs them like binary data).

MySQL's latin1 is cp1252 with the five bytes cp1252 leaves undefined (0x81, 0x8D, 0x8F,
0x90, 0x9D) mapped to the same-numbered C1 control characters, so it never fails; it is
registered here as the codec ``mysql_latin1``.
"""
from __future__ import annotations

import codecs

from .constants import BINARY_COLLATION

# --- the mysql_latin1 codec -------------------------------------------------------------

def _latin1_table() -> str:
    chars = []
    for b in range(256):
        try:
            chars.append(bytes([b]).decode("cp1252"))
        except UnicodeDecodeError:
            chars.append(chr(b))
    return "".join(chars)


_LATIN1_DECODING = _latin1_table()
_LATIN1_ENCODING = codecs.charmap_build(_LATIN1_DECODING)


def _latin1_encode(text, errors="strict"):
    return codecs.charmap_encode(text, errors, _LATIN1_ENCODING)


def _latin1_decode(data, errors="strict"):
    return codecs.charmap_decode(data, errors, _LATIN1_DECODING)


def _search(name: str):
    if name in ("mysql_latin1", "mysql-latin1"):
        return codecs.CodecInfo(_latin1_encode, _latin1_decode, name="mysql_latin1")
    return None


codecs.register(_search)


def decode_mysql_latin1(data: bytes) -> str:
    """MySQL latin1 bytes to str; never fails."""
    return codecs.charmap_decode(data, "strict", _LATIN1_DECODING)[0]


# --- charset name -> Python codec -------------------------------------------------------

CHARSET_CODECS: dict[str, str | None] = {
    "binary": None,
    "utf8mb3": "utf-8", "utf8": "utf-8", "utf8mb4": "utf-8",
    "latin1": "mysql_latin1",
    "ascii": "ascii",
    "ucs2": "utf-16-be", "utf16": "utf-16-be", "utf16le": "utf-16-le", "utf32": "utf-32-be",
    "gbk": "gbk", "gb2312": "gb2312", "gb18030": "gb18030", "big5": "big5",
    "sjis": "shift_jis", "cp932": "cp932", "ujis": "euc_jp",
    "eucjpms": "euc_jp",          # closest Python codec; eucjpms adds IBM/NEC extensions
    "euckr": "euc_kr",
    "koi8r": "koi8_r", "koi8u": "koi8_u",
    "cp1250": "cp1250", "cp1251": "cp1251", "cp1256": "cp1256", "cp1257": "cp1257",
    "cp850": "cp850", "cp852": "cp852", "cp866": "cp866",
    "latin2": "iso8859_2", "latin5": "iso8859_9", "latin7": "iso8859_13",
    "greek": "iso8859_7", "hebrew": "iso8859_8", "tis620": "tis_620",
    "macroman": "mac_roman", "macce": "mac_latin2",
    # No Python codec: values stay bytes.
    "armscii8": None, "geostd8": None, "keybcs2": None, "dec8": None, "hp8": None,
    "swe7": None,
}

# --- collation id -> charset name -------------------------------------------------------

MARIADB_COLLATIONS: dict[int, str] = {
    1: 'big5', 2: 'latin2', 3: 'dec8', 4: 'cp850', 5: 'latin1', 6: 'hp8', 7: 'koi8r',
    8: 'latin1', 9: 'latin2', 10: 'swe7', 11: 'ascii', 12: 'ujis', 13: 'sjis',
    14: 'cp1251', 15: 'latin1', 16: 'hebrew', 18: 'tis620', 19: 'euckr', 20: 'latin7',
    21: 'latin2', 22: 'koi8u', 23: 'cp1251', 24: 'gb2312', 25: 'greek', 26: 'cp1250',
    27: 'latin2', 28: 'gbk', 29: 'cp1257', 30: 'latin5', 31: 'latin1', 32: 'armscii8',
    33: 'utf8mb3', 34: 'cp1250', 35: 'ucs2', 36: 'cp866', 37: 'keybcs2', 38: 'macce',
    39: 'macroman', 40: 'cp852', 41: 'latin7', 42: 'latin7', 43: 'macce', 44: 'cp1250',
    45: 'utf8mb4', 46: 'utf8mb4', 47: 'latin1', 48: 'latin1', 49: 'latin1', 50: 'cp1251',
    51: 'cp1251', 52: 'cp1251', 53: 'macroman', 54: 'utf16', 55: 'utf16', 56: 'utf16le',
    57: 'cp1256', 58: 'cp1257', 59: 'cp1257', 60: 'utf32', 61: 'utf32', 62: 'utf16le',
    63: 'binary', 64: 'armscii8', 65: 'ascii', 66: 'cp1250', 67: 'cp1256', 68: 'cp866',
    69: 'dec8', 70: 'greek', 71: 'hebrew', 72: 'hp8', 73: 'keybcs2', 74: 'koi8r',
    75: 'koi8u', 77: 'latin2', 78: 'latin5', 79: 'latin7', 80: 'cp850', 81: 'cp852',
    82: 'swe7', 83: 'utf8mb3', 84: 'big5', 85: 'euckr', 86: 'gb2312', 87: 'gbk',
    88: 'sjis', 89: 'tis620', 90: 'ucs2', 91: 'ujis', 92: 'geostd8', 93: 'geostd8',
    94: 'latin1', 95: 'cp932', 96: 'cp932', 97: 'eucjpms', 98: 'eucjpms', 99: 'cp1250',
    101: 'utf16', 102: 'utf16', 103: 'utf16', 104: 'utf16', 105: 'utf16', 106: 'utf16',
    107: 'utf16', 108: 'utf16', 109: 'utf16', 110: 'utf16', 111: 'utf16', 112: 'utf16',
    113: 'utf16', 114: 'utf16', 115: 'utf16', 116: 'utf16', 117: 'utf16', 118: 'utf16',
    119: 'utf16', 120: 'utf16', 121: 'utf16', 122: 'utf16', 123: 'utf16', 124: 'utf16',
    128: 'ucs2', 129: 'ucs2', 130: 'ucs2', 131: 'ucs2', 132: 'ucs2', 133: 'ucs2',
    134: 'ucs2', 135: 'ucs2', 136: 'ucs2', 137: 'ucs2', 138: 'ucs2', 139: 'ucs2',
    140: 'ucs2', 141: 'ucs2', 142: 'ucs2', 143: 'ucs2', 144: 'ucs2', 145: 'ucs2',
    146: 'ucs2', 147: 'ucs2', 148: 'ucs2', 149: 'ucs2', 150: 'ucs2', 151: 'ucs2',
    159: 'ucs2', 160: 'utf32', 161: 'utf32', 162: 'utf32', 163: 'utf32', 164: 'utf32',
    165: 'utf32', 166: 'utf32', 167: 'utf32', 168: 'utf32', 169: 'utf32', 170: 'utf32',
    171: 'utf32', 172: 'utf32', 173: 'utf32', 174: 'utf32', 175: 'utf32', 176: 'utf32',
    177: 'utf32', 178: 'utf32', 179: 'utf32', 180: 'utf32', 181: 'utf32', 182: 'utf32',
    183: 'utf32', 192: 'utf8mb3', 193: 'utf8mb3', 194: 'utf8mb3', 195: 'utf8mb3',
    196: 'utf8mb3', 197: 'utf8mb3', 198: 'utf8mb3', 199: 'utf8mb3', 200: 'utf8mb3',
    201: 'utf8mb3', 202: 'utf8mb3', 203: 'utf8mb3', 204: 'utf8mb3', 205: 'utf8mb3',
    206: 'utf8mb3', 207: 'utf8mb3', 208: 'utf8mb3', 209: 'utf8mb3', 210: 'utf8mb3',
    211: 'utf8mb3', 212: 'utf8mb3', 213: 'utf8mb3', 214: 'utf8mb3', 215: 'utf8mb3',
    223: 'utf8mb3', 224: 'utf8mb4', 225: 'utf8mb4', 226: 'utf8mb4', 227: 'utf8mb4',
    228: 'utf8mb4', 229: 'utf8mb4', 230: 'utf8mb4', 231: 'utf8mb4', 232: 'utf8mb4',
    233: 'utf8mb4', 234: 'utf8mb4', 235: 'utf8mb4', 236: 'utf8mb4', 237: 'utf8mb4',
    238: 'utf8mb4', 239: 'utf8mb4', 240: 'utf8mb4', 241: 'utf8mb4', 242: 'utf8mb4',
    243: 'utf8mb4', 244: 'utf8mb4', 245: 'utf8mb4', 246: 'utf8mb4', 247: 'utf8mb4',
    576: 'utf8mb3', 577: 'utf8mb3', 578: 'utf8mb3', 608: 'utf8mb4', 609: 'utf8mb4',
    610: 'utf8mb4', 640: 'ucs2', 641: 'ucs2', 642: 'ucs2', 672: 'utf16', 673: 'utf16',
    674: 'utf16', 736: 'utf32', 737: 'utf32', 738: 'utf32', 1025: 'big5', 1027: 'dec8',
    1028: 'cp850', 1030: 'hp8', 1031: 'koi8r', 1032: 'latin1', 1033: 'latin2',
    1034: 'swe7', 1035: 'ascii', 1036: 'ujis', 1037: 'sjis', 1040: 'hebrew',
    1042: 'tis620', 1043: 'euckr', 1046: 'koi8u', 1048: 'gb2312', 1049: 'greek',
    1050: 'cp1250', 1052: 'gbk', 1054: 'latin5', 1056: 'armscii8', 1057: 'utf8mb3',
    1059: 'ucs2', 1060: 'cp866', 1061: 'keybcs2', 1062: 'macce', 1063: 'macroman',
    1064: 'cp852', 1065: 'latin7', 1067: 'macce', 1069: 'utf8mb4', 1070: 'utf8mb4',
    1071: 'latin1', 1074: 'cp1251', 1075: 'cp1251', 1077: 'macroman', 1078: 'utf16',
    1079: 'utf16', 1080: 'utf16le', 1081: 'cp1256', 1082: 'cp1257', 1083: 'cp1257',
    1084: 'utf32', 1085: 'utf32', 1086: 'utf16le', 1088: 'armscii8', 1089: 'ascii',
    1090: 'cp1250', 1091: 'cp1256', 1092: 'cp866', 1093: 'dec8', 1094: 'greek',
    1095: 'hebrew', 1096: 'hp8', 1097: 'keybcs2', 1098: 'koi8r', 1099: 'koi8u',
    1101: 'latin2', 1102: 'latin5', 1103: 'latin7', 1104: 'cp850', 1105: 'cp852',
    1106: 'swe7', 1107: 'utf8mb3', 1108: 'big5', 1109: 'euckr', 1110: 'gb2312',
    1111: 'gbk', 1112: 'sjis', 1113: 'tis620', 1114: 'ucs2', 1115: 'ujis', 1116: 'geostd8',
    1117: 'geostd8', 1119: 'cp932', 1120: 'cp932', 1121: 'eucjpms', 1122: 'eucjpms',
    1125: 'utf16', 1147: 'utf16', 1152: 'ucs2', 1174: 'ucs2', 1184: 'utf32', 1206: 'utf32',
    1216: 'utf8mb3', 1238: 'utf8mb3', 1248: 'utf8mb4', 1270: 'utf8mb4', 2048: 'utf8mb3',
    2049: 'utf8mb3', 2050: 'utf8mb3', 2051: 'utf8mb3', 2052: 'utf8mb3', 2053: 'utf8mb3',
    2054: 'utf8mb3', 2055: 'utf8mb3', 2056: 'utf8mb3', 2057: 'utf8mb3', 2058: 'utf8mb3',
    2059: 'utf8mb3', 2060: 'utf8mb3', 2061: 'utf8mb3', 2062: 'utf8mb3', 2063: 'utf8mb3',
    2064: 'utf8mb3', 2065: 'utf8mb3', 2066: 'utf8mb3', 2067: 'utf8mb3', 2068: 'utf8mb3',
    2069: 'utf8mb3', 2070: 'utf8mb3', 2071: 'utf8mb3', 2072: 'utf8mb3', 2073: 'utf8mb3',
    2074: 'utf8mb3', 2075: 'utf8mb3', 2076: 'utf8mb3', 2077: 'utf8mb3', 2078: 'utf8mb3',
    2079: 'utf8mb3', 2080: 'utf8mb3', 2081: 'utf8mb3', 2082: 'utf8mb3', 2083: 'utf8mb3',
    2084: 'utf8mb3', 2085: 'utf8mb3', 2086: 'utf8mb3', 2087: 'utf8mb3', 2088: 'utf8mb3',
    2089: 'utf8mb3', 2090: 'utf8mb3', 2091: 'utf8mb3', 2092: 'utf8mb3', 2093: 'utf8mb3',
    2094: 'utf8mb3', 2095: 'utf8mb3', 2096: 'utf8mb3', 2097: 'utf8mb3', 2098: 'utf8mb3',
    2099: 'utf8mb3', 2100: 'utf8mb3', 2101: 'utf8mb3', 2102: 'utf8mb3', 2103: 'utf8mb3',
    2104: 'utf8mb3', 2105: 'utf8mb3', 2106: 'utf8mb3', 2107: 'utf8mb3', 2108: 'utf8mb3',
    2109: 'utf8mb3', 2110: 'utf8mb3', 2111: 'utf8mb3', 2112: 'utf8mb3', 2113: 'utf8mb3',
    2114: 'utf8mb3', 2115: 'utf8mb3', 2116: 'utf8mb3', 2117: 'utf8mb3', 2118: 'utf8mb3',
    2119: 'utf8mb3', 2120: 'utf8mb3', 2121: 'utf8mb3', 2122: 'utf8mb3', 2123: 'utf8mb3',
    2124: 'utf8mb3', 2125: 'utf8mb3', 2126: 'utf8mb3', 2127: 'utf8mb3', 2128: 'utf8mb3',
    2129: 'utf8mb3', 2130: 'utf8mb3', 2131: 'utf8mb3', 2132: 'utf8mb3', 2133: 'utf8mb3',
    2134: 'utf8mb3', 2135: 'utf8mb3', 2136: 'utf8mb3', 2137: 'utf8mb3', 2138: 'utf8mb3',
    2139: 'utf8mb3', 2140: 'utf8mb3', 2141: 'utf8mb3', 2142: 'utf8mb3', 2143: 'utf8mb3',
    2144: 'utf8mb3', 2145: 'utf8mb3', 2146: 'utf8mb3', 2147: 'utf8mb3', 2148: 'utf8mb3',
    2149: 'utf8mb3', 2150: 'utf8mb3', 2151: 'utf8mb3', 2152: 'utf8mb3', 2153: 'utf8mb3',
    2154: 'utf8mb3', 2155: 'utf8mb3', 2156: 'utf8mb3', 2157: 'utf8mb3', 2158: 'utf8mb3',
    2159: 'utf8mb3', 2160: 'utf8mb3', 2161: 'utf8mb3', 2162: 'utf8mb3', 2163: 'utf8mb3',
    2164: 'utf8mb3', 2165: 'utf8mb3', 2166: 'utf8mb3', 2167: 'utf8mb3', 2168: 'utf8mb3',
    2169: 'utf8mb3', 2170: 'utf8mb3', 2171: 'utf8mb3', 2172: 'utf8mb3', 2173: 'utf8mb3',
    2174: 'utf8mb3', 2175: 'utf8mb3', 2176: 'utf8mb3', 2177: 'utf8mb3', 2178: 'utf8mb3',
    2179: 'utf8mb3', 2180: 'utf8mb3', 2181: 'utf8mb3', 2182: 'utf8mb3', 2183: 'utf8mb3',
    2184: 'utf8mb3', 2185: 'utf8mb3', 2186: 'utf8mb3', 2187: 'utf8mb3', 2188: 'utf8mb3',
    2189: 'utf8mb3', 2190: 'utf8mb3', 2191: 'utf8mb3', 2192: 'utf8mb3', 2193: 'utf8mb3',
    2194: 'utf8mb3', 2195: 'utf8mb3', 2196: 'utf8mb3', 2197: 'utf8mb3', 2198: 'utf8mb3',
    2199: 'utf8mb3', 2200: 'utf8mb3', 2201: 'utf8mb3', 2202: 'utf8mb3', 2203: 'utf8mb3',
    2204: 'utf8mb3', 2205: 'utf8mb3', 2206: 'utf8mb3', 2207: 'utf8mb3', 2208: 'utf8mb3',
    2209: 'utf8mb3', 2210: 'utf8mb3', 2211: 'utf8mb3', 2212: 'utf8mb3', 2213: 'utf8mb3',
    2214: 'utf8mb3', 2215: 'utf8mb3', 2232: 'utf8mb3', 2233: 'utf8mb3', 2234: 'utf8mb3',
    2235: 'utf8mb3', 2236: 'utf8mb3', 2237: 'utf8mb3', 2238: 'utf8mb3', 2239: 'utf8mb3',
    2240: 'utf8mb3', 2241: 'utf8mb3', 2242: 'utf8mb3', 2243: 'utf8mb3', 2244: 'utf8mb3',
    2245: 'utf8mb3', 2246: 'utf8mb3', 2247: 'utf8mb3', 2304: 'utf8mb4', 2305: 'utf8mb4',
    2306: 'utf8mb4', 2307: 'utf8mb4', 2308: 'utf8mb4', 2309: 'utf8mb4', 2310: 'utf8mb4',
    2311: 'utf8mb4', 2312: 'utf8mb4', 2313: 'utf8mb4', 2314: 'utf8mb4', 2315: 'utf8mb4',
    2316: 'utf8mb4', 2317: 'utf8mb4', 2318: 'utf8mb4', 2319: 'utf8mb4', 2320: 'utf8mb4',
    2321: 'utf8mb4', 2322: 'utf8mb4', 2323: 'utf8mb4', 2324: 'utf8mb4', 2325: 'utf8mb4',
    2326: 'utf8mb4', 2327: 'utf8mb4', 2328: 'utf8mb4', 2329: 'utf8mb4', 2330: 'utf8mb4',
    2331: 'utf8mb4', 2332: 'utf8mb4', 2333: 'utf8mb4', 2334: 'utf8mb4', 2335: 'utf8mb4',
    2336: 'utf8mb4', 2337: 'utf8mb4', 2338: 'utf8mb4', 2339: 'utf8mb4', 2340: 'utf8mb4',
    2341: 'utf8mb4', 2342: 'utf8mb4', 2343: 'utf8mb4', 2344: 'utf8mb4', 2345: 'utf8mb4',
    2346: 'utf8mb4', 2347: 'utf8mb4', 2348: 'utf8mb4', 2349: 'utf8mb4', 2350: 'utf8mb4',
    2351: 'utf8mb4', 2352: 'utf8mb4', 2353: 'utf8mb4', 2354: 'utf8mb4', 2355: 'utf8mb4',
    2356: 'utf8mb4', 2357: 'utf8mb4', 2358: 'utf8mb4', 2359: 'utf8mb4', 2360: 'utf8mb4',
    2361: 'utf8mb4', 2362: 'utf8mb4', 2363: 'utf8mb4', 2364: 'utf8mb4', 2365: 'utf8mb4',
    2366: 'utf8mb4', 2367: 'utf8mb4', 2368: 'utf8mb4', 2369: 'utf8mb4', 2370: 'utf8mb4',
    2371: 'utf8mb4', 2372: 'utf8mb4', 2373: 'utf8mb4', 2374: 'utf8mb4', 2375: 'utf8mb4',
    2376: 'utf8mb4', 2377: 'utf8mb4', 2378: 'utf8mb4', 2379: 'utf8mb4', 2380: 'utf8mb4',
    2381: 'utf8mb4', 2382: 'utf8mb4', 2383: 'utf8mb4', 2384: 'utf8mb4', 2385: 'utf8mb4',
    2386: 'utf8mb4', 2387: 'utf8mb4', 2388: 'utf8mb4', 2389: 'utf8mb4', 2390: 'utf8mb4',
    2391: 'utf8mb4', 2392: 'utf8mb4', 2393: 'utf8mb4', 2394: 'utf8mb4', 2395: 'utf8mb4',
    2396: 'utf8mb4', 2397: 'utf8mb4', 2398: 'utf8mb4', 2399: 'utf8mb4', 2400: 'utf8mb4',
    2401: 'utf8mb4', 2402: 'utf8mb4', 2403: 'utf8mb4', 2404: 'utf8mb4', 2405: 'utf8mb4',
    2406: 'utf8mb4', 2407: 'utf8mb4', 2408: 'utf8mb4', 2409: 'utf8mb4', 2410: 'utf8mb4',
    2411: 'utf8mb4', 2412: 'utf8mb4', 2413: 'utf8mb4', 2414: 'utf8mb4', 2415: 'utf8mb4',
    2416: 'utf8mb4', 2417: 'utf8mb4', 2418: 'utf8mb4', 2419: 'utf8mb4', 2420: 'utf8mb4',
    2421: 'utf8mb4', 2422: 'utf8mb4', 2423: 'utf8mb4', 2424: 'utf8mb4', 2425: 'utf8mb4',
    2426: 'utf8mb4', 2427: 'utf8mb4', 2428: 'utf8mb4', 2429: 'utf8mb4', 2430: 'utf8mb4',
    2431: 'utf8mb4', 2432: 'utf8mb4', 2433: 'utf8mb4', 2434: 'utf8mb4', 2435: 'utf8mb4',
    2436: 'utf8mb4', 2437: 'utf8mb4', 2438: 'utf8mb4', 2439: 'utf8mb4', 2440: 'utf8mb4',
    2441: 'utf8mb4', 2442: 'utf8mb4', 2443: 'utf8mb4', 2444: 'utf8mb4', 2445: 'utf8mb4',
    2446: 'utf8mb4', 2447: 'utf8mb4', 2448: 'utf8mb4', 2449: 'utf8mb4', 2450: 'utf8mb4',
    2451: 'utf8mb4', 2452: 'utf8mb4', 2453: 'utf8mb4', 2454: 'utf8mb4', 2455: 'utf8mb4',
    2456: 'utf8mb4', 2457: 'utf8mb4', 2458: 'utf8mb4', 2459: 'utf8mb4', 2460: 'utf8mb4',
    2461: 'utf8mb4', 2462: 'utf8mb4', 2463: 'utf8mb4', 2464: 'utf8mb4', 2465: 'utf8mb4',
    2466: 'utf8mb4', 2467: 'utf8mb4', 2468: 'utf8mb4', 2469: 'utf8mb4', 2470: 'utf8mb4',
    2471: 'utf8mb4', 2488: 'utf8mb4', 2489: 'utf8mb4', 2490: 'utf8mb4', 2491: 'utf8mb4',
    2492: 'utf8mb4', 2493: 'utf8mb4', 2494: 'utf8mb4', 2495: 'utf8mb4', 2496: 'utf8mb4',
    2497: 'utf8mb4', 2498: 'utf8mb4', 2499: 'utf8mb4', 2500: 'utf8mb4', 2501: 'utf8mb4',
    2502: 'utf8mb4', 2503: 'utf8mb4', 2560: 'ucs2', 2561: 'ucs2', 2562: 'ucs2',
    2563: 'ucs2', 2564: 'ucs2', 2565: 'ucs2', 2566: 'ucs2', 2567: 'ucs2', 2568: 'ucs2',
    2569: 'ucs2', 2570: 'ucs2', 2571: 'ucs2', 2572: 'ucs2', 2573: 'ucs2', 2574: 'ucs2',
    2575: 'ucs2', 2576: 'ucs2', 2577: 'ucs2', 2578: 'ucs2', 2579: 'ucs2', 2580: 'ucs2',
    2581: 'ucs2', 2582: 'ucs2', 2583: 'ucs2', 2584: 'ucs2', 2585: 'ucs2', 2586: 'ucs2',
    2587: 'ucs2', 2588: 'ucs2', 2589: 'ucs2', 2590: 'ucs2', 2591: 'ucs2', 2592: 'ucs2',
    2593: 'ucs2', 2594: 'ucs2', 2595: 'ucs2', 2596: 'ucs2', 2597: 'ucs2', 2598: 'ucs2',
    2599: 'ucs2', 2600: 'ucs2', 2601: 'ucs2', 2602: 'ucs2', 2603: 'ucs2', 2604: 'ucs2',
    2605: 'ucs2', 2606: 'ucs2', 2607: 'ucs2', 2608: 'ucs2', 2609: 'ucs2', 2610: 'ucs2',
    2611: 'ucs2', 2612: 'ucs2', 2613: 'ucs2', 2614: 'ucs2', 2615: 'ucs2', 2616: 'ucs2',
    2617: 'ucs2', 2618: 'ucs2', 2619: 'ucs2', 2620: 'ucs2', 2621: 'ucs2', 2622: 'ucs2',
    2623: 'ucs2', 2624: 'ucs2', 2625: 'ucs2', 2626: 'ucs2', 2627: 'ucs2', 2628: 'ucs2',
    2629: 'ucs2', 2630: 'ucs2', 2631: 'ucs2', 2632: 'ucs2', 2633: 'ucs2', 2634: 'ucs2',
    2635: 'ucs2', 2636: 'ucs2', 2637: 'ucs2', 2638: 'ucs2', 2639: 'ucs2', 2640: 'ucs2',
    2641: 'ucs2', 2642: 'ucs2', 2643: 'ucs2', 2644: 'ucs2', 2645: 'ucs2', 2646: 'ucs2',
    2647: 'ucs2', 2648: 'ucs2', 2649: 'ucs2', 2650: 'ucs2', 2651: 'ucs2', 2652: 'ucs2',
    2653: 'ucs2', 2654: 'ucs2', 2655: 'ucs2', 2656: 'ucs2', 2657: 'ucs2', 2658: 'ucs2',
    2659: 'ucs2', 2660: 'ucs2', 2661: 'ucs2', 2662: 'ucs2', 2663: 'ucs2', 2664: 'ucs2',
    2665: 'ucs2', 2666: 'ucs2', 2667: 'ucs2', 2668: 'ucs2', 2669: 'ucs2', 2670: 'ucs2',
    2671: 'ucs2', 2672: 'ucs2', 2673: 'ucs2', 2674: 'ucs2', 2675: 'ucs2', 2676: 'ucs2',
    2677: 'ucs2', 2678: 'ucs2', 2679: 'ucs2', 2680: 'ucs2', 2681: 'ucs2', 2682: 'ucs2',
    2683: 'ucs2', 2684: 'ucs2', 2685: 'ucs2', 2686: 'ucs2', 2687: 'ucs2', 2688: 'ucs2',
    2689: 'ucs2', 2690: 'ucs2', 2691: 'ucs2', 2692: 'ucs2', 2693: 'ucs2', 2694: 'ucs2',
    2695: 'ucs2', 2696: 'ucs2', 2697: 'ucs2', 2698: 'ucs2', 2699: 'ucs2', 2700: 'ucs2',
    2701: 'ucs2', 2702: 'ucs2', 2703: 'ucs2', 2704: 'ucs2', 2705: 'ucs2', 2706: 'ucs2',
    2707: 'ucs2', 2708: 'ucs2', 2709: 'ucs2', 2710: 'ucs2', 2711: 'ucs2', 2712: 'ucs2',
    2713: 'ucs2', 2714: 'ucs2', 2715: 'ucs2', 2716: 'ucs2', 2717: 'ucs2', 2718: 'ucs2',
    2719: 'ucs2', 2720: 'ucs2', 2721: 'ucs2', 2722: 'ucs2', 2723: 'ucs2', 2724: 'ucs2',
    2725: 'ucs2', 2726: 'ucs2', 2727: 'ucs2', 2744: 'ucs2', 2745: 'ucs2', 2746: 'ucs2',
    2747: 'ucs2', 2748: 'ucs2', 2749: 'ucs2', 2750: 'ucs2', 2751: 'ucs2', 2752: 'ucs2',
    2753: 'ucs2', 2754: 'ucs2', 2755: 'ucs2', 2756: 'ucs2', 2757: 'ucs2', 2758: 'ucs2',
    2759: 'ucs2', 2816: 'utf16', 2817: 'utf16', 2818: 'utf16', 2819: 'utf16',
    2820: 'utf16', 2821: 'utf16', 2822: 'utf16', 2823: 'utf16', 2824: 'utf16',
    2825: 'utf16', 2826: 'utf16', 2827: 'utf16', 2828: 'utf16', 2829: 'utf16',
    2830: 'utf16', 2831: 'utf16', 2832: 'utf16', 2833: 'utf16', 2834: 'utf16',
    2835: 'utf16', 2836: 'utf16', 2837: 'utf16', 2838: 'utf16', 2839: 'utf16',
    2840: 'utf16', 2841: 'utf16', 2842: 'utf16', 2843: 'utf16', 2844: 'utf16',
    2845: 'utf16', 2846: 'utf16', 2847: 'utf16', 2848: 'utf16', 2849: 'utf16',
    2850: 'utf16', 2851: 'utf16', 2852: 'utf16', 2853: 'utf16', 2854: 'utf16',
    2855: 'utf16', 2856: 'utf16', 2857: 'utf16', 2858: 'utf16', 2859: 'utf16',
    2860: 'utf16', 2861: 'utf16', 2862: 'utf16', 2863: 'utf16', 2864: 'utf16',
    2865: 'utf16', 2866: 'utf16', 2867: 'utf16', 2868: 'utf16', 2869: 'utf16',
    2870: 'utf16', 2871: 'utf16', 2872: 'utf16', 2873: 'utf16', 2874: 'utf16',
    2875: 'utf16', 2876: 'utf16', 2877: 'utf16', 2878: 'utf16', 2879: 'utf16',
    2880: 'utf16', 2881: 'utf16', 2882: 'utf16', 2883: 'utf16', 2884: 'utf16',
    2885: 'utf16', 2886: 'utf16', 2887: 'utf16', 2888: 'utf16', 2889: 'utf16',
    2890: 'utf16', 2891: 'utf16', 2892: 'utf16', 2893: 'utf16', 2894: 'utf16',
    2895: 'utf16', 2896: 'utf16', 2897: 'utf16', 2898: 'utf16', 2899: 'utf16',
    2900: 'utf16', 2901: 'utf16', 2902: 'utf16', 2903: 'utf16', 2904: 'utf16',
    2905: 'utf16', 2906: 'utf16', 2907: 'utf16', 2908: 'utf16', 2909: 'utf16',
    2910: 'utf16', 2911: 'utf16', 2912: 'utf16', 2913: 'utf16', 2914: 'utf16',
    2915: 'utf16', 2916: 'utf16', 2917: 'utf16', 2918: 'utf16', 2919: 'utf16',
    2920: 'utf16', 2921: 'utf16', 2922: 'utf16', 2923: 'utf16', 2924: 'utf16',
    2925: 'utf16', 2926: 'utf16', 2927: 'utf16', 2928: 'utf16', 2929: 'utf16',
    2930: 'utf16', 2931: 'utf16', 2932: 'utf16', 2933: 'utf16', 2934: 'utf16',
    2935: 'utf16', 2936: 'utf16', 2937: 'utf16', 2938: 'utf16', 2939: 'utf16',
    2940: 'utf16', 2941: 'utf16', 2942: 'utf16', 2943: 'utf16', 2944: 'utf16',
    2945: 'utf16', 2946: 'utf16', 2947: 'utf16', 2948: 'utf16', 2949: 'utf16',
    2950: 'utf16', 2951: 'utf16', 2952: 'utf16', 2953: 'utf16', 2954: 'utf16',
    2955: 'utf16', 2956: 'utf16', 2957: 'utf16', 2958: 'utf16', 2959: 'utf16',
    2960: 'utf16', 2961: 'utf16', 2962: 'utf16', 2963: 'utf16', 2964: 'utf16',
    2965: 'utf16', 2966: 'utf16', 2967: 'utf16', 2968: 'utf16', 2969: 'utf16',
    2970: 'utf16', 2971: 'utf16', 2972: 'utf16', 2973: 'utf16', 2974: 'utf16',
    2975: 'utf16', 2976: 'utf16', 2977: 'utf16', 2978: 'utf16', 2979: 'utf16',
    2980: 'utf16', 2981: 'utf16', 2982: 'utf16', 2983: 'utf16', 3000: 'utf16',
    3001: 'utf16', 3002: 'utf16', 3003: 'utf16', 3004: 'utf16', 3005: 'utf16',
    3006: 'utf16', 3007: 'utf16', 3008: 'utf16', 3009: 'utf16', 3010: 'utf16',
    3011: 'utf16', 3012: 'utf16', 3013: 'utf16', 3014: 'utf16', 3015: 'utf16',
    3072: 'utf32', 3073: 'utf32', 3074: 'utf32', 3075: 'utf32', 3076: 'utf32',
    3077: 'utf32', 3078: 'utf32', 3079: 'utf32', 3080: 'utf32', 3081: 'utf32',
    3082: 'utf32', 3083: 'utf32', 3084: 'utf32', 3085: 'utf32', 3086: 'utf32',
    3087: 'utf32', 3088: 'utf32', 3089: 'utf32', 3090: 'utf32', 3091: 'utf32',
    3092: 'utf32', 3093: 'utf32', 3094: 'utf32', 3095: 'utf32', 3096: 'utf32',
    3097: 'utf32', 3098: 'utf32', 3099: 'utf32', 3100: 'utf32', 3101: 'utf32',
    3102: 'utf32', 3103: 'utf32', 3104: 'utf32', 3105: 'utf32', 3106: 'utf32',
    3107: 'utf32', 3108: 'utf32', 3109: 'utf32', 3110: 'utf32', 3111: 'utf32',
    3112: 'utf32', 3113: 'utf32', 3114: 'utf32', 3115: 'utf32', 3116: 'utf32',
    3117: 'utf32', 3118: 'utf32', 3119: 'utf32', 3120: 'utf32', 3121: 'utf32',
    3122: 'utf32', 3123: 'utf32', 3124: 'utf32', 3125: 'utf32', 3126: 'utf32',
    3127: 'utf32', 3128: 'utf32', 3129: 'utf32', 3130: 'utf32', 3131: 'utf32',
    3132: 'utf32', 3133: 'utf32', 3134: 'utf32', 3135: 'utf32', 3136: 'utf32',
    3137: 'utf32', 3138: 'utf32', 3139: 'utf32', 3140: 'utf32', 3141: 'utf32',
    3142: 'utf32', 3143: 'utf32', 3144: 'utf32', 3145: 'utf32', 3146: 'utf32',
    3147: 'utf32', 3148: 'utf32', 3149: 'utf32', 3150: 'utf32', 3151: 'utf32',
    3152: 'utf32', 3153: 'utf32', 3154: 'utf32', 3155: 'utf32', 3156: 'utf32',
    3157: 'utf32', 3158: 'utf32', 3159: 'utf32', 3160: 'utf32', 3161: 'utf32',
    3162: 'utf32', 3163: 'utf32', 3164: 'utf32', 3165: 'utf32', 3166: 'utf32',
    3167: 'utf32', 3168: 'utf32', 3169: 'utf32', 3170: 'utf32', 3171: 'utf32',
    3172: 'utf32', 3173: 'utf32', 3174: 'utf32', 3175: 'utf32', 3176: 'utf32',
    3177: 'utf32', 3178: 'utf32', 3179: 'utf32', 3180: 'utf32', 3181: 'utf32',
    3182: 'utf32', 3183: 'utf32', 3184: 'utf32', 3185: 'utf32', 3186: 'utf32',
    3187: 'utf32', 3188: 'utf32', 3189: 'utf32', 3190: 'utf32', 3191: 'utf32',
    3192: 'utf32', 3193: 'utf32', 3194: 'utf32', 3195: 'utf32', 3196: 'utf32',
    3197: 'utf32', 3198: 'utf32', 3199: 'utf32', 3200: 'utf32', 3201: 'utf32',
    3202: 'utf32', 3203: 'utf32', 3204: 'utf32', 3205: 'utf32', 3206: 'utf32',
    3207: 'utf32', 3208: 'utf32', 3209: 'utf32', 3210: 'utf32', 3211: 'utf32',
    3212: 'utf32', 3213: 'utf32', 3214: 'utf32', 3215: 'utf32', 3216: 'utf32',
    3217: 'utf32', 3218: 'utf32', 3219: 'utf32', 3220: 'utf32', 3221: 'utf32',
    3222: 'utf32', 3223: 'utf32', 3224: 'utf32', 3225: 'utf32', 3226: 'utf32',
    3227: 'utf32', 3228: 'utf32', 3229: 'utf32', 3230: 'utf32', 3231: 'utf32',
    3232: 'utf32', 3233: 'utf32', 3234: 'utf32', 3235: 'utf32', 3236: 'utf32',
    3237: 'utf32', 3238: 'utf32', 3239: 'utf32', 3256: 'utf32', 3257: 'utf32',
    3258: 'utf32', 3259: 'utf32', 3260: 'utf32', 3261: 'utf32', 3262: 'utf32',
    3263: 'utf32', 3264: 'utf32', 3265: 'utf32', 3266: 'utf32', 3267: 'utf32',
    3268: 'utf32', 3269: 'utf32', 3270: 'utf32', 3271: 'utf32',
}

MYSQL_ONLY_COLLATIONS: dict[int, str] = {
    76: 'utf8mb3', 248: 'gb18030', 249: 'gb18030', 250: 'gb18030', 255: 'utf8mb4',
    256: 'utf8mb4', 257: 'utf8mb4', 258: 'utf8mb4', 259: 'utf8mb4', 260: 'utf8mb4',
    261: 'utf8mb4', 262: 'utf8mb4', 263: 'utf8mb4', 264: 'utf8mb4', 265: 'utf8mb4',
    266: 'utf8mb4', 267: 'utf8mb4', 268: 'utf8mb4', 269: 'utf8mb4', 270: 'utf8mb4',
    271: 'utf8mb4', 272: 'utf8mb4', 273: 'utf8mb4', 274: 'utf8mb4', 275: 'utf8mb4',
    276: 'utf8mb4', 277: 'utf8mb4', 278: 'utf8mb4', 279: 'utf8mb4', 280: 'utf8mb4',
    281: 'utf8mb4', 282: 'utf8mb4', 283: 'utf8mb4', 284: 'utf8mb4', 285: 'utf8mb4',
    286: 'utf8mb4', 287: 'utf8mb4', 288: 'utf8mb4', 289: 'utf8mb4', 290: 'utf8mb4',
    291: 'utf8mb4', 292: 'utf8mb4', 293: 'utf8mb4', 294: 'utf8mb4', 295: 'utf8mb4',
    296: 'utf8mb4', 297: 'utf8mb4', 298: 'utf8mb4', 299: 'utf8mb4', 300: 'utf8mb4',
    301: 'utf8mb4', 302: 'utf8mb4', 303: 'utf8mb4', 304: 'utf8mb4', 305: 'utf8mb4',
    306: 'utf8mb4', 307: 'utf8mb4', 308: 'utf8mb4', 309: 'utf8mb4', 310: 'utf8mb4',
    311: 'utf8mb4', 312: 'utf8mb4', 313: 'utf8mb4', 314: 'utf8mb4', 315: 'utf8mb4',
    316: 'utf8mb4', 317: 'utf8mb4', 318: 'utf8mb4', 319: 'utf8mb4', 320: 'utf8mb4',
    321: 'utf8mb4', 322: 'utf8mb4', 323: 'utf8mb4',
}

COLLATIONS: dict[int, str] = {**MARIADB_COLLATIONS, **MYSQL_ONLY_COLLATIONS}


def charset_for_collation(cid: int) -> str | None:
    return COLLATIONS.get(cid)


def codec_for_collation(cid: int | None) -> str | None:
    """Python codec for a collation id; None for binary (63), unknown ids and charsets
    without a Python codec (see CHARSET_CODECS)."""
    if cid is None or cid == BINARY_COLLATION:
        return None
    charset = COLLATIONS.get(cid)
    if charset is None:
        return None
    return CHARSET_CODECS.get(charset)


# --- charset or collation name -> collation id (what TABLE_MAP charset TLVs carry) ------

#: The default collation id of each charset and a few common collations by name
#: (MariaDB 10.11 information_schema.COLLATIONS).  A collation not listed is given as its
#: charset's default: same charset, so the same bytes-to-text decoding.
COLLATION_IDS: dict[str, int] = {
    "big5": 1, "dec8": 3, "cp850": 4, "hp8": 6, "koi8r": 7, "latin1": 8, "latin2": 9,
    "swe7": 10, "ascii": 11, "ujis": 12, "sjis": 13, "hebrew": 16, "tis620": 18, "euckr": 19,
    "koi8u": 22, "gb2312": 24, "greek": 25, "cp1250": 26, "gbk": 28, "latin5": 30,
    "armscii8": 32, "utf8mb3": 33, "utf8": 33, "ucs2": 35, "cp866": 36, "keybcs2": 37,
    "macce": 38, "macroman": 39, "cp852": 40, "latin7": 41, "utf8mb4": 45, "cp1251": 51,
    "utf16": 54, "utf16le": 56, "cp1256": 57, "cp1257": 59, "utf32": 60, "binary": 63,
    "geostd8": 92, "cp932": 95, "eucjpms": 97,
    "latin1_swedish_ci": 8, "latin1_bin": 47, "latin1_general_ci": 48, "ascii_bin": 65,
    "utf8mb3_general_ci": 33, "utf8mb3_bin": 83, "utf8mb3_unicode_ci": 192,
    "utf8_general_ci": 33, "utf8_bin": 83, "utf8_unicode_ci": 192,
    "utf8mb4_general_ci": 45, "utf8mb4_bin": 46, "utf8mb4_unicode_ci": 224,
    "utf8mb4_unicode_520_ci": 246,
}


def collation_id(charset: str | None, collation: str | None = None) -> int | None:
    """The collation id for a column's collation (else its charset's default), or None."""
    if collation and collation.lower() in COLLATION_IDS:
        return COLLATION_IDS[collation.lower()]
    if charset:
        return COLLATION_IDS.get(charset.lower())
    return None


# --- a column's charset name (output rendering, checksums) -----------------------------

_CODEC_CHARSET = {}
for _name, _codec in CHARSET_CODECS.items():
    if _codec and _codec not in _CODEC_CHARSET and _name != "utf8":
        _CODEC_CHARSET[_codec] = _name
_CODEC_CHARSET["utf-8"] = "utf8mb4"


def charset_of(col) -> str | None:
    """The MySQL charset name of a column's text (``binary`` for binary strings), from its
    collation, else from the codec the binlog gave; None when neither is known."""
    if col.collation is not None:
        return "binary" if col.collation == BINARY_COLLATION else COLLATIONS.get(col.collation)
    if col.encoding:
        return _CODEC_CHARSET.get(col.encoding)
    return None
