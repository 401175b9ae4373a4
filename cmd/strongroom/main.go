// Command strongroom is the Strongroom business-banking server and its
// command line: `strongroom server` serves the API, `strongroom login`,
// `strongroom balances`, `strongroom pay` … speak to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/strongroom/strongroom/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
