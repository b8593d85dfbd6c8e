//! Math expressions of x, y, z, t from problem files (stub).
