package plans_test

import (
	"io/fs"
	"regexp"

	"github.com/strongroom/strongroom/migrations"
)

var createTable = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?(\w+)`)

// schemaTables lists every table the SQLite migrations create.
func schemaTables() []string {
	var out []string
	files := migrations.SQLite()
	_ = fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		for _, m := range createTable.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
		return nil
	})
	return out
}
