package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// configDir is the directory of the CLI's files: $XDG_CONFIG_HOME/strongroom,
// else $HOME/.config/strongroom (os.UserConfigDir on Unix, read through
// getenv so that tests can move it).
func (e *env) configDir() (string, error) {
	if dir := e.getenv("XDG_CONFIG_HOME"); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("XDG_CONFIG_HOME %q is not an absolute path", dir)
		}
		return filepath.Join(dir, "strongroom"), nil
	}
	home := e.getenv("HOME")
	if home == "" {
		return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep the session token")
	}
	return filepath.Join(home, ".config", "strongroom"), nil
}

// The files of the config directory.
const (
	tokenFile  = "token"  // the session token, mode 0600
	deviceFile = "device" // the device id of the last sign-in, reused by the next
)

// readFile reads one file of the config directory; "" when it does not
// exist.
func (e *env) readFile(name string) (string, error) {
	dir, err := e.configDir()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// writeFile writes one file of the config directory, mode 0600, the
// directory 0700, replacing it at once (a temporary file renamed).
func (e *env) writeFile(name, content string) error {
	dir, err := e.configDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(content + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// removeFile removes one file of the config directory; reports whether it
// existed.
func (e *env) removeFile(name string) (bool, error) {
	dir, err := e.configDir()
	if err != nil {
		return false, err
	}
	err = os.Remove(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (e *env) readToken() (string, error) { return e.readFile(tokenFile) }
