//! Connecting to MySQL/MariaDB the way its own clients do.
