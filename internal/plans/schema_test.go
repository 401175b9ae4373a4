package plans_test

import (
	"io/fs"
	"regexp"

	"github.com/strongroom/strongroom/migrations"
)

var (
	createTable = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?(\w+)`)
	dropTable   = regexp.MustCompile(`(?i)DROP TABLE (?:IF EXISTS )?(\w+)`)
)

// schemaTables lists every table the SQLite migrations create and no later
// migration drops.
func schemaTables() []string {
	var created []string
	dropped := map[string]bool{}
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
			created = append(created, m[1])
		}
		for _, m := range dropTable.FindAllStringSubmatch(string(b), -1) {
			dropped[m[1]] = true
		}
		return nil
	})
	var out []string
	for _, n := range created {
		if !dropped[n] {
			out = append(out, n)
		}
	}
	return out
}
