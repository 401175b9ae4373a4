// Package migrations embeds the numbered, forward-only SQL migrations of both
// database engines. Each folder holds the same numbers; a change to the schema
// adds a new file to both.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite/*.sql
var sqliteFiles embed.FS

//go:embed postgres/*.sql
var postgresFiles embed.FS

// SQLite returns the migrations of the embedded SQLite engine.
func SQLite() fs.FS { return sub(sqliteFiles, "sqlite") }

// Postgres returns the migrations of PostgreSQL.
func Postgres() fs.FS { return sub(postgresFiles, "postgres") }

func sub(f embed.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the folder is embedded at build time; absence is a build defect
	}
	return s
}
