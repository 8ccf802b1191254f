/*
 * The column kinds of the compiled row walks and the byte widths of their values: the
 * one copy both extensions (binlog/_speedups.h, binlog/_scan.c) include.  The Python
 * side (binlog/column_kinds.py) holds the same numbers for the pure path;
 * tests/binlog/test_column_kinds.py parses this file and fails when the two disagree.
 *
 * Widths: MariaDB sql/sql_type.cc (the 5.3 hires layouts: sec_part_bytes,
 * my_datetime_binary_length's legacy table, TIME's), MySQL sql-common/my_time.cc
 * my_datetime_binary_length / my_time_binary_length / my_timestamp_binary_length (the
 * 5.6 fsp bytes), strings/decimal.c decimal_bin_size (dig2bytes).
 */
#ifndef BINLOG_COLUMN_KINDS_H
#define BINLOG_COLUMN_KINDS_H

/* Value kinds, by how a value is laid out in a row image (binlog/rows.py speed_spec
 * chooses one per column; K_PY: the column's Python decoder). */
enum {
    K_PY = 0, K_TINY, K_SHORT, K_INT24, K_LONG, K_LONGLONG, K_FLOAT, K_DOUBLE, K_YEAR,
    K_DATE, K_TS0, K_DT0, K_TIME0, K_TS_HIRES, K_DT_HIRES, K_TIME_HIRES, K_TS2, K_DT2,
    K_TIME2, K_VARCHAR, K_STRING, K_BLOB, K_DECIMAL, K_BIT, K_ENUM,
    K_COUNT
};

/* Bytes of a value of a fixed-size kind; 0: its size depends on the column (fractional
 * temporals, DECIMAL, BIT, ENUM) or on the value (length-prefixed kinds, K_PY). */
static const int KIND_FIXED_BYTES[K_COUNT] = {
    [K_TINY] = 1, [K_YEAR] = 1, [K_SHORT] = 2, [K_INT24] = 3, [K_DATE] = 3, [K_TIME0] = 3,
    [K_LONG] = 4, [K_FLOAT] = 4, [K_TS0] = 4, [K_LONGLONG] = 8, [K_DOUBLE] = 8, [K_DT0] = 8,
};

/* Index N (fractional digits, 0..6). */
static const int SEC_PART_BYTES[7] = {0, 1, 1, 2, 2, 3, 3};          /* 5.3 TIMESTAMP(N) after its 4 */
static const int DATETIME_HIRES_BYTES[7] = {5, 6, 6, 7, 7, 7, 8};    /* 5.3 DATETIME(N) */
static const int TIME_HIRES_BYTES[7] = {3, 4, 4, 5, 5, 5, 6};        /* 5.3 TIME(N) */
static const int FSP_BYTES[7] = {0, 1, 1, 2, 2, 3, 3};               /* 5.6 *2 fraction */
static const int FSP_MULT[7] = {0, 10000, 10000, 100, 100, 1, 1};     /* 5.6 fraction -> usec */
/* Bytes of a partial DECIMAL group of k digits (a whole group of 9 takes 4). */
static const int DIG2BYTES[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

/* Bytes of a fractional temporal kind's value with N digits; -1: not such a kind or N
 * out of range. */
static inline int kind_temporal_bytes(int kind, int n) {
    if (n < 0 || n > 6) return -1;
    switch (kind) {
    case K_TS_HIRES: return 4 + SEC_PART_BYTES[n];
    case K_DT_HIRES: return DATETIME_HIRES_BYTES[n];
    case K_TIME_HIRES: return TIME_HIRES_BYTES[n];
    case K_TS2: return 4 + FSP_BYTES[n];
    case K_DT2: return 5 + FSP_BYTES[n];
    case K_TIME2: return 3 + FSP_BYTES[n];
    default: return -1;
    }
}

/* Bytes of a DECIMAL(precision, scale) value (decimal_bin_size); -1 for metadata no
 * server writes (checked before DIG2BYTES[intg % 9]: intg < 0 would index below it) and
 * for the empty DECIMAL(0,0). */
static inline int decimal_bin_size(int precision, int scale) {
    if (!(precision > 0 && precision <= 65 && scale >= 0 && scale <= 30 && scale <= precision))
        return -1;
    int intg = precision - scale;
    int size = DIG2BYTES[intg % 9] + intg / 9 * 4 + scale / 9 * 4 + DIG2BYTES[scale % 9];
    return size ? size : -1;
}

#endif
