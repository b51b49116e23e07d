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
	r := &stageReader{
		spec:      imageSpec{Labels: map[string]string{}},
		vars:      map[string]string{},
		lex:       shell.NewLex(res.EscapeToken),
		buildArgs: buildArgs,
	}
	for _, cmd := range stages[len(stages)-1].Commands {
		if err := r.apply(cmd); err != nil {
			return imageSpec{}, err
		}
	}
	if !r.copied {
		return imageSpec{}, errors.New("the final stage copies no binary")
	}
	return r.spec, nil
}

// stageReader applies a stage's instructions to the spec in order. Only
// the stage's own ARGs are in scope in it; the ones before the first FROM
// are not, as in docker build.
type stageReader struct {
	spec      imageSpec
	vars      map[string]string
	order     []string // of vars, as they were first set
	lex       *shell.Lex
	buildArgs map[string]string
	copied    bool
}

func (r *stageReader) set(k, v string) {
	if _, ok := r.vars[k]; !ok {
		r.order = append(r.order, k)
	}
	r.vars[k] = v
}

// expand expands word with the variables set so far.
func (r *stageReader) expand(word string) (string, error) {
	env := make([]string, 0, len(r.order))
	for _, k := range r.order {
		env = append(env, k+"="+r.vars[k])
	}
	s, _, err := r.lex.ProcessWord(word, shell.EnvsFromSlice(env))
	return s, err
}

// apply expands one instruction's words, but an ARG's, which expands its
// default only when no build argument is given, and applies it.
func (r *stageReader) apply(cmd instructions.Command) error {
	if _, isArg := cmd.(*instructions.ArgCommand); !isArg {
		if e, ok := cmd.(instructions.SupportsSingleWordExpansion); ok {
			if err := e.Expand(r.expand); err != nil {
				return fmt.Errorf("%s: %w", cmd.Name(), err)
			}
		}
	}
	switch c := cmd.(type) {
	case *instructions.ArgCommand:
		return r.arg(c)
	case *instructions.LabelCommand:
		for _, kv := range c.Labels {
			r.spec.Labels[kv.Key] = kv.Value
		}
	case *instructions.EnvCommand:
		for _, kv := range c.Env {
			r.set(kv.Key, kv.Value)
			r.spec.Env = setEnv(r.spec.Env, kv.Key, kv.Value)
		}
	case *instructions.WorkdirCommand:
		r.spec.WorkingDir = path.Join("/", r.spec.WorkingDir, c.Path)
	case *instructions.UserCommand:
		if !numericUser(c.User) {
			return fmt.Errorf("USER %s: want a numeric uid[:gid], since the image has no /etc/passwd", c.User)
		}
		r.spec.User = c.User
	case *instructions.EntrypointCommand:
		if c.PrependShell {
			return errors.New("ENTRYPOINT is in shell form, but the image has no shell")
		}
		r.spec.Entrypoint = c.CmdLine
		r.spec.Cmd = nil // as docker build does
	case *instructions.CmdCommand:
		if c.PrependShell {
			return errors.New("CMD is in shell form, but the image has no shell")
		}
		r.spec.Cmd = c.CmdLine
	case *instructions.CopyCommand:
		return r.copyBinary(c)
	default:
		return fmt.Errorf("the final stage's %s is not reproduced without its base image", strings.ToUpper(cmd.Name()))
	}
	return nil
}

// arg sets each ARG to its build argument, or else to its default.
func (r *stageReader) arg(c *instructions.ArgCommand) error {
	for _, a := range c.Args {
		if v, ok := r.buildArgs[a.Key]; ok {
			r.set(a.Key, v)
		} else if a.Value != nil {
			v, err := r.expand(*a.Value)
			if err != nil {
				return fmt.Errorf("ARG %s: %w", a.Key, err)
			}
			r.set(a.Key, v)
		}
	}
	return nil
}

// copyBinary takes the binary's path in the image from the stage's one
// COPY, which must copy one file from an earlier stage.
func (r *stageReader) copyBinary(c *instructions.CopyCommand) error {
	if r.copied {
		return errors.New("more than one COPY in the final stage; the image holds one binary")
	}
	r.copied = true
	if c.From == "" || len(c.SourcePaths) != 1 || len(c.SourceContents) > 0 {
		return errors.New("the final stage's COPY must copy one file from an earlier stage")
	}
	if c.Chown != "" || c.Chmod != "" || c.Parents || len(c.ExcludePatterns) > 0 {
		return errors.New("COPY --chown, --chmod, --parents and --exclude are not reproduced")
	}
	dest := c.DestPath
	if strings.HasSuffix(dest, "/") {
		dest += path.Base(c.SourcePaths[0])
	}
	r.spec.Path = path.Join("/", r.spec.WorkingDir, dest)
	return nil
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
