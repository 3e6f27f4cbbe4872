//! Data generators (TPC-H via tpchgen-arrow, db-benchmark h2o).
