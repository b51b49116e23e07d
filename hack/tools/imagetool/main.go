// Command imagetool writes a container image as a docker archive (the
// format of `docker save`) without a Docker engine and without pulling
// anything. The image is one layer holding one already built static binary.
//
// From a Dockerfile, the image's user, entrypoint, command, environment,
// working directory, labels and the binary's path are those of the final
// stage, read with BuildKit's own Dockerfile parser; the base image is left
// out, and instructions that would need it or a shell are refused:
//
//	imagetool -dockerfile Dockerfile.webhook -build-arg VERSION=dev \
//	    -binary bin/images/build/snatch-webhook -tag snatch-webhook:e2e -o snatch-webhook.tar
//	imagetool -binary bin/pause -entrypoint /pause -user 65535:65535 -tag pause:e2e -o pause.tar
//
// The output is reproducible: every timestamp is the Unix epoch
// (docs/development.md, "Tools in hack/tools").
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "imagetool:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	dockerfile string
	buildArgs  map[string]string
	binary     string
	entrypoint string
	user       string
	tag        string
	out        string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{buildArgs: map[string]string{}}
	fs := flag.NewFlagSet("imagetool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dockerfile, "dockerfile", "", "take the image's configuration and the binary's path from this Dockerfile's final stage")
	fs.Func("build-arg", "`NAME=VALUE` for an ARG of the Dockerfile, as docker build --build-arg (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", s)
		}
		o.buildArgs[k] = v
		return nil
	})
	fs.StringVar(&o.binary, "binary", "", "the static binary the image holds (required)")
	fs.StringVar(&o.entrypoint, "entrypoint", "", "without -dockerfile: the binary's absolute path in the image, which is also the entrypoint")
	fs.StringVar(&o.user, "user", "", "without -dockerfile: the image's user, numeric uid:gid")
	fs.StringVar(&o.tag, "tag", "", "the image reference written into the archive, such as name:tag (required)")
	fs.StringVar(&o.out, "o", "", "the archive to write (required)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, o.validate()
}

func (o options) validate() error {
	switch {
	case o.binary == "" || o.tag == "" || o.out == "":
		return fmt.Errorf("-binary, -tag and -o are required")
	case o.dockerfile != "" && (o.entrypoint != "" || o.user != ""):
		return fmt.Errorf("-entrypoint and -user come from the Dockerfile; give them only without -dockerfile")
	case o.dockerfile == "" && len(o.buildArgs) > 0:
		return fmt.Errorf("-build-arg needs -dockerfile")
	case o.dockerfile == "" && !strings.HasPrefix(o.entrypoint, "/"):
		return fmt.Errorf("-entrypoint must be an absolute path, got %q", o.entrypoint)
	case o.dockerfile == "" && !numericUser(o.user):
		return fmt.Errorf("-user must be a numeric uid:gid, got %q: the image has no /etc/passwd", o.user)
	}
	return nil
}

func run(args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var spec imageSpec
	if o.dockerfile != "" {
		data, err := os.ReadFile(o.dockerfile)
		if err != nil {
			return err
		}
		if spec, err = finalStage(data, o.buildArgs); err != nil {
			return fmt.Errorf("%s: %w", o.dockerfile, err)
		}
	} else {
		spec = imageSpec{Path: o.entrypoint, Entrypoint: []string{o.entrypoint}, User: o.user}
	}
	if err := writeArchive(o.out, o.tag, o.binary, spec); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "imagetool: wrote %s to %s (%s at %s)\n", o.tag, o.out, o.binary, spec.Path)
	return nil
}
