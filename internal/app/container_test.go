package app_test

import (
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The image Containerfile describes: built with podman where it is
// installed. Images cannot be pulled here, so the Go build stage is stood in
// for by a stage holding what it makes (a static binary compiled on the
// host with the same flags, the CA bundle, /tmp, /data, the user's entry),
// and the image stage, FROM scratch, is built verbatim from the Containerfile
// on it (the build stage itself needs the network and is not built here). The first run compiles the module once with CGO_ENABLED=0 (minutes);
// later runs reuse Go's build cache.
func TestContainerImage(t *testing.T) {
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman is not installed (Debian package podman): the container image is not built")
	}
	if os.Geteuid() != 0 {
		t.Skip("podman image mount, which the test reads the image's files with, needs root")
	}
	raw, err := os.ReadFile("../../Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	containerfile := string(raw)
	i := strings.Index(containerfile, "\nFROM scratch AS image\n")
	if i < 0 || !strings.Contains(containerfile[:i], "\nFROM docker.io/library/golang:${GO_VERSION}-bookworm AS build\n") ||
		!strings.Contains(containerfile[:i], "CGO_ENABLED=0 go build -trimpath") {
		t.Fatal("Containerfile: want a golang build stage named build (CGO_ENABLED=0 go build -trimpath), then FROM scratch AS image")
	}
	imageStage := containerfile[i+1:]

	// The stand-in for the build stage's /out/rootfs.
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs")
	for _, d := range []string{"rootfs/tmp", "rootfs/etc/ssl/certs", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X github.com/strongroom/strongroom/internal/app.Version=container-test",
		"-o", filepath.Join(rootfs, "strongroom"), "./cmd/strongroom")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	must(t, os.Chmod(filepath.Join(rootfs, "tmp"), os.ModeSticky|0o777))
	must(t, os.Chmod(filepath.Join(dir, "data"), 0o700))
	certs, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		certs = []byte("# the host has no CA bundle; the real build stage copies Debian's\n")
	}
	must(t, os.WriteFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt"), certs, 0o644))
	must(t, os.WriteFile(filepath.Join(rootfs, "etc/passwd"), []byte("strongroom:x:10001:10001:Strongroom:/data:/nonexistent\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(rootfs, "etc/group"), []byte("strongroom:x:10001:\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "Containerfile"), []byte("FROM scratch AS build\nCOPY rootfs/ /out/rootfs/\nCOPY data/ /out/data/\n\n"+imageStage), 0o644))

	tag := make([]byte, 6)
	rand.Read(tag)
	image := "localhost/strongroom-container-test:" + hex.EncodeToString(tag)
	podmanRun := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := exec.Command(podman, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	// The docker format keeps the HEALTHCHECK (OCI images have none).
	if out, err := podmanRun("build", "--format", "docker", "--pull=never", "-t", image, "-f", filepath.Join(dir, "Containerfile"), dir); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = podmanRun("rmi", "-f", image) })

	out, err := podmanRun("image", "inspect", image)
	if err != nil {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	var inspected []struct {
		Config struct {
			User         string
			Env          []string
			Entrypoint   []string
			Cmd          []string
			Volumes      map[string]any
			ExposedPorts map[string]any
		}
		HealthCheck *struct{ Test []string }
	}
	if err := json.Unmarshal([]byte(out), &inspected); err != nil || len(inspected) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	c := inspected[0].Config
	if c.User != "10001:10001" {
		t.Errorf("runs as %q, want the unprivileged 10001:10001", c.User)
	}
	for _, kv := range []string{"STRONGROOM_ADDR=0.0.0.0:8080", "STRONGROOM_DATABASE=sqlite:/data/strongroom.db", "STRONGROOM_FILES=file:/data/files"} {
		if !slices.Contains(c.Env, kv) {
			t.Errorf("environment %v lacks %s", c.Env, kv)
		}
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v, want /data", c.Volumes)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("exposed ports %v, want 8080/tcp", c.ExposedPorts)
	}
	if !slices.Equal(c.Entrypoint, []string{"/strongroom"}) || !slices.Equal(c.Cmd, []string{"server"}) {
		t.Errorf("entrypoint %v, command %v; want /strongroom server", c.Entrypoint, c.Cmd)
	}
	if hc := inspected[0].HealthCheck; hc == nil || !slices.Contains(hc.Test, "healthcheck") {
		t.Errorf("health check %+v, want /strongroom healthcheck", hc)
	}

	// The image's files: a static binary (scratch has no loader or libc),
	// a /tmp anyone may write, /data the server's user's (COPY would leave
	// it root's, and the server could not create its database there).
	mnt, err := podmanRun("image", "mount", image)
	if err != nil {
		t.Fatalf("podman image mount: %v\n%s", err, mnt)
	}
	mnt = strings.TrimSpace(mnt)
	t.Cleanup(func() { _, _ = podmanRun("image", "unmount", image) })
	bin, err := elf.Open(filepath.Join(mnt, "strongroom"))
	if err != nil {
		t.Fatalf("the image's /strongroom: %v", err)
	}
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/strongroom is dynamically linked; the image has no loader")
		}
	}
	bin.Close()
	if fi, err := os.Stat(filepath.Join(mnt, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v, want drwxrwxrwt", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(mnt, "data")); err != nil {
		t.Error(err)
	} else if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || st.Uid != 10001 || st.Gid != 10001 || fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("/data: %v owned by %d:%d, want a directory of 10001:10001 only it may write", fi.Mode(), st.Uid, st.Gid)
	}
	if _, err := os.Stat(filepath.Join(mnt, "etc/ssl/certs/ca-certificates.crt")); err != nil {
		t.Errorf("no CA certificates: %v", err)
	}

	// Running a container needs a runtime that may set resource limits;
	// some sandboxes refuse it (crun: setrlimit … OCI permission denied).
	out, err = podmanRun("run", "--rm", "--network=none", image, "version")
	switch {
	case err == nil:
		if strings.TrimSpace(out) != "strongroom container-test" {
			t.Errorf("strongroom version in the container printed %q", out)
		}
	case strings.Contains(out, "OCI permission denied"):
		t.Logf("the image was built and checked, but this machine cannot run containers: %s", strings.TrimSpace(out))
	default:
		t.Errorf("podman run … version: %v\n%s", err, out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
