/*M!999999\- enable the sandbox mode */ 
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: localhost    Database: tp
-- ------------------------------------------------------
-- Server version	10.11.19-MariaDB-0+deb12u1-log

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;

--
-- Current Database: `tp`
--

CREATE DATABASE /*!32312 IF NOT EXISTS*/ `tp` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */;

USE `tp`;

--
-- Table structure for table `legacy_all`
--

DROP TABLE IF EXISTS `legacy_all`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `legacy_all` (
  `id` int(11) NOT NULL,
  `ts0` timestamp /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts1` timestamp(1) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts2` timestamp(2) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts3` timestamp(3) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts4` timestamp(4) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts5` timestamp(5) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts6` timestamp(6) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `dt0` datetime /* mariadb-5.3 */ DEFAULT NULL,
  `dt1` datetime(1) /* mariadb-5.3 */ DEFAULT NULL,
  `dt2` datetime(2) /* mariadb-5.3 */ DEFAULT NULL,
  `dt3` datetime(3) /* mariadb-5.3 */ DEFAULT NULL,
  `dt4` datetime(4) /* mariadb-5.3 */ DEFAULT NULL,
  `dt5` datetime(5) /* mariadb-5.3 */ DEFAULT NULL,
  `dt6` datetime(6) /* mariadb-5.3 */ DEFAULT NULL,
  `t0` time /* mariadb-5.3 */ DEFAULT NULL,
  `t1` time(1) /* mariadb-5.3 */ DEFAULT NULL,
  `t2` time(2) /* mariadb-5.3 */ DEFAULT NULL,
  `t3` time(3) /* mariadb-5.3 */ DEFAULT NULL,
  `t4` time(4) /* mariadb-5.3 */ DEFAULT NULL,
  `t5` time(5) /* mariadb-5.3 */ DEFAULT NULL,
  `t6` time(6) /* mariadb-5.3 */ DEFAULT NULL,
  `note` varchar(30) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Table structure for table `mysql56_all`
--

DROP TABLE IF EXISTS `mysql56_all`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `mysql56_all` (
  `id` int(11) NOT NULL,
  `ts0` timestamp NULL DEFAULT NULL,
  `ts1` timestamp(1) NULL DEFAULT NULL,
  `ts2` timestamp(2) NULL DEFAULT NULL,
  `ts3` timestamp(3) NULL DEFAULT NULL,
  `ts4` timestamp(4) NULL DEFAULT NULL,
  `ts5` timestamp(5) NULL DEFAULT NULL,
  `ts6` timestamp(6) NULL DEFAULT NULL,
  `dt0` datetime DEFAULT NULL,
  `dt1` datetime(1) DEFAULT NULL,
  `dt2` datetime(2) DEFAULT NULL,
  `dt3` datetime(3) DEFAULT NULL,
  `dt4` datetime(4) DEFAULT NULL,
  `dt5` datetime(5) DEFAULT NULL,
  `dt6` datetime(6) DEFAULT NULL,
  `t0` time DEFAULT NULL,
  `t1` time(1) DEFAULT NULL,
  `t2` time(2) DEFAULT NULL,
  `t3` time(3) DEFAULT NULL,
  `t4` time(4) DEFAULT NULL,
  `t5` time(5) DEFAULT NULL,
  `t6` time(6) DEFAULT NULL,
  `note` varchar(30) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Table structure for table `tt`
--

DROP TABLE IF EXISTS `tt`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `tt` (
  `ct` timestamp(6) /* mariadb-5.3 */ NOT NULL,
  `st` varchar(30) DEFAULT NULL,
  `st2` varchar(621) DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

-- Dump completed
