"""What people read: named SQL reports, the HTML report, one hand explained, tables for
people."""
