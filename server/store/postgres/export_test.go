package postgres

// Migrations exposes the schema steps to the external tests.
var Migrations = migrations
