// Package workflows runs the scripts of the release workflows' steps that
// decide what a release holds, outside GitHub Actions: each step's run:
// text is read from .github/workflows and run with bash, with the
// environment that the runner would give it. test/manifests holds every
// workflow's actions to commit pins, and make lint runs actionlint on them.
package workflows
