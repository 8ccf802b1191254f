-- The tables of shared/seeds/003 (MariaDB legacy temporal format, mysql56_temporal_format=OFF
-- when they were created; default binlog_row_metadata=NO_LOG, as on a 10.0/10.1 master).
SET timestamp = 1667387482;
CREATE DATABASE test;
USE test;
create table test.tt(
ct timestamp(6) NOT NULL,
st varchar(30) default NULL,
st2 varchar(621) default NULL
) ENGINE = InnoDB CHARACTER SET = utf8;
insert into test.tt values(
"2022-11-02 11:11:22.326147",
NULL,
NULL);
create table test2(ct timestamp(2));
insert into test2(ct) values("2022/11/10 21:12:33.99");
-- The schema as a dump made now would show it (the CREATEs above stay in the binlog; the
-- dump is an extra, harmless input for schema-aware decoding).
--! dump-schema test
