package main

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// imageSpec is what the image holds besides the binary's bytes.
type imageSpec struct {
	Path       string // absolute path of the binary in the image
	Entrypoint []string
	Cmd        []string
	User       string
	Env        []string
	WorkingDir string
	Labels     map[string]string
}

// finalStage reads the final stage of a Dockerfile as `docker build` would
// with buildArgs: ARGs take the build argument or their default, and
// LABEL, USER, ENV, WORKDIR and COPY are expanded with the stage's ARGs and
// ENVs. The stage must COPY exactly one file from an earlier stage: the
// binary.
func finalStage(dockerfile []byte, buildArgs map[string]string) (imageSpec, error) {
	res, err := parser.Parse(bytes.NewReader(dockerfile))
	if err != nil {
		return imageSpec{}, err
	}
	// The linter is needed for the parse, not for its warnings.
	stages, _, err := instructions.Parse(res.AST, linter.New(&linter.Config{SkipAll: true}))
	if err != nil {
		return imageSpec{}, err
	}
	if len(stages) == 0 {
		return imageSpec{}, errors.New("no FROM")
	}
	final := stages[len(stages)-1]

	spec := imageSpec{Labels: map[string]string{}}
	// Only the stage's own ARGs are in scope in it; the ones before the
	// first FROM are not, as in docker build.
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	lex := shell.NewLex(res.EscapeToken)
	expand := func(word string) (string, error) {
		env := make([]string, 0, len(order))
		for _, k := range order {
			env = append(env, k+"="+vars[k])
		}
		s, _, err := lex.ProcessWord(word, shell.EnvsFromSlice(env))
		return s, err
	}

	var copied bool
	for _, cmd := range final.Commands {
		if _, isArg := cmd.(*instructions.ArgCommand); !isArg {
			if e, ok := cmd.(instructions.SupportsSingleWordExpansion); ok {
				if err := e.Expand(expand); err != nil {
					return imageSpec{}, fmt.Errorf("%s: %w", cmd.Name(), err)
				}
			}
		}
		switch c := cmd.(type) {
		case *instructions.ArgCommand:
			for _, a := range c.Args {
				if v, ok := buildArgs[a.Key]; ok {
					set(a.Key, v)
				} else if a.Value != nil {
					v, err := expand(*a.Value)
					if err != nil {
						return imageSpec{}, fmt.Errorf("ARG %s: %w", a.Key, err)
					}
					set(a.Key, v)
				}
			}
		case *instructions.LabelCommand:
			for _, kv := range c.Labels {
				spec.Labels[kv.Key] = kv.Value
			}
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				set(kv.Key, kv.Value)
				spec.Env = setEnv(spec.Env, kv.Key, kv.Value)
			}
		case *instructions.WorkdirCommand:
			spec.WorkingDir = path.Join("/", spec.WorkingDir, c.Path)
		case *instructions.UserCommand:
			if !numericUser(c.User) {
				return imageSpec{}, fmt.Errorf("USER %s: want a numeric uid[:gid], since the image has no /etc/passwd", c.User)
			}
			spec.User = c.User
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				return imageSpec{}, errors.New("ENTRYPOINT is in shell form, but the image has no shell")
			}
			spec.Entrypoint = c.CmdLine
			spec.Cmd = nil // as docker build does
		case *instructions.CmdCommand:
			if c.PrependShell {
				return imageSpec{}, errors.New("CMD is in shell form, but the image has no shell")
			}
			spec.Cmd = c.CmdLine
		case *instructions.CopyCommand:
			if copied {
				return imageSpec{}, errors.New("more than one COPY in the final stage; the image holds one binary")
			}
			copied = true
			if c.From == "" || len(c.SourcePaths) != 1 || len(c.SourceContents) > 0 {
				return imageSpec{}, errors.New("the final stage's COPY must copy one file from an earlier stage")
			}
			if c.Chown != "" || c.Chmod != "" || c.Parents || len(c.ExcludePatterns) > 0 {
				return imageSpec{}, errors.New("COPY --chown, --chmod, --parents and --exclude are not reproduced")
			}
			dest := c.DestPath
			if strings.HasSuffix(dest, "/") {
				dest += path.Base(c.SourcePaths[0])
			}
			spec.Path = path.Join("/", spec.WorkingDir, dest)
		default:
			return imageSpec{}, fmt.Errorf("the final stage's %s is not reproduced without its base image", strings.ToUpper(cmd.Name()))
		}
	}
	if !copied {
		return imageSpec{}, errors.New("the final stage copies no binary")
	}
	return spec, nil
}

// numericUser reports whether u is uid or uid:gid in numbers.
func numericUser(u string) bool {
	uid, gid, hasGID := strings.Cut(u, ":")
	isNum := func(s string) bool { _, err := strconv.ParseUint(s, 10, 32); return err == nil }
	return isNum(uid) && (!hasGID || isNum(gid))
}

// setEnv sets k=v in env, replacing an earlier k.
func setEnv(env []string, k, v string) []string {
	for i, e := range env {
		if strings.HasPrefix(e, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}
