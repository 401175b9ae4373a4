package e2e

import (
	"flag"
	"os"
	"testing"
)

// e2eParallel is how many tests run at once unless -parallel says otherwise.
// Each test runs its own server on its own database and spends most of its
// time waiting on the database, the network or a child process, so more
// tests than cores keep the cores busy. On PostgreSQL each server holds up
// to about twenty connections, well within the test cluster's limit.
const e2eParallel = "8"

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", e2eParallel)
	}
	os.Exit(m.Run())
}
