package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestFinalStageReadsTheSpecAndRefusesWhatNeedsTheBase(t *testing.T) {
	const builder = "FROM golang AS builder\nRUN go build -o /out/app .\n"
	tests := []struct {
		name       string
		dockerfile string
		buildArgs  map[string]string
		want       imageSpec
		wantErr    string
	}{
		{
			name: "build_arg_overrides_the_default",
			dockerfile: builder + `FROM base
ARG VERSION=dev
LABEL a.title="app" \
      a.version="${VERSION}"
COPY --from=builder /out/app /app
USER 65532:65532
ENTRYPOINT ["/app"]`,
			buildArgs: map[string]string{"VERSION": "v1.2.3"},
			want: imageSpec{Path: "/app", Entrypoint: []string{"/app"}, User: "65532:65532",
				Labels: map[string]string{"a.title": "app", "a.version": "v1.2.3"}},
		},
		{
			name:       "default_holds_without_a_build_arg",
			dockerfile: builder + "FROM base\nARG VERSION=dev\nLABEL v=$VERSION\nCOPY --from=builder /out/app /app\n",
			want:       imageSpec{Path: "/app", Labels: map[string]string{"v": "dev"}},
		},
		{
			name:       "arg_before_the_first_from_is_not_in_scope",
			dockerfile: "ARG VERSION=meta\n" + builder + "FROM base\nLABEL v=\"x${VERSION}\"\nCOPY --from=builder /out/app /app\n",
			buildArgs:  map[string]string{"VERSION": "v1"},
			want:       imageSpec{Path: "/app", Labels: map[string]string{"v": "x"}},
		},
		{
			name:       "copy_into_a_directory_under_workdir_gives_the_full_path",
			dockerfile: builder + "FROM base\nWORKDIR /opt\nENV A=1\nCOPY --from=builder /out/app bin/\nENTRYPOINT [\"/opt/bin/app\"]\nCMD [\"--help\"]\n",
			want: imageSpec{Path: "/opt/bin/app", WorkingDir: "/opt", Env: []string{"A=1"},
				Entrypoint: []string{"/opt/bin/app"}, Cmd: []string{"--help"}, Labels: map[string]string{}},
		},
		{name: "run_is_refused", dockerfile: builder + "FROM base\nCOPY --from=builder /out/app /app\nRUN true\n", wantErr: "RUN is not reproduced"},
		{name: "shell_form_entrypoint_is_refused", dockerfile: builder + "FROM base\nCOPY --from=builder /out/app /app\nENTRYPOINT /app\n", wantErr: "shell form"},
		{name: "named_user_is_refused", dockerfile: builder + "FROM base\nCOPY --from=builder /out/app /app\nUSER nonroot\n", wantErr: "numeric"},
		{name: "two_copies_are_refused", dockerfile: builder + "FROM base\nCOPY --from=builder /out/app /app\nCOPY --from=builder /out/app /b\n", wantErr: "more than one COPY"},
		{name: "copy_from_the_context_is_refused", dockerfile: "FROM base\nCOPY app /app\n", wantErr: "from an earlier stage"},
		{name: "no_copy_is_refused", dockerfile: builder + "FROM base\nUSER 1\n", wantErr: "copies no binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := finalStage([]byte(tt.dockerfile), tt.buildArgs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestOptionsValidateRejectsInconsistentFlags(t *testing.T) {
	base := options{binary: "b", tag: "t:e2e", out: "o.tar"}
	tests := []struct {
		name    string
		mutate  func(*options)
		wantErr bool
	}{
		{name: "plain_image_is_valid", mutate: func(o *options) { o.entrypoint, o.user = "/b", "65532:65532" }},
		{name: "from_a_dockerfile_is_valid", mutate: func(o *options) { o.dockerfile, o.buildArgs = "Dockerfile", map[string]string{"VERSION": "v1"} }},
		{name: "no_output_is_refused", mutate: func(o *options) { o.entrypoint, o.user, o.out = "/b", "1", "" }, wantErr: true},
		{name: "relative_entrypoint_is_refused", mutate: func(o *options) { o.entrypoint, o.user = "b", "1" }, wantErr: true},
		{name: "named_user_is_refused", mutate: func(o *options) { o.entrypoint, o.user = "/b", "nonroot" }, wantErr: true},
		{name: "user_beside_a_dockerfile_is_refused", mutate: func(o *options) { o.dockerfile, o.user = "Dockerfile", "1" }, wantErr: true},
		{name: "build_arg_without_a_dockerfile_is_refused", mutate: func(o *options) {
			o.entrypoint, o.user, o.buildArgs = "/b", "1", map[string]string{"A": "1"}
		}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.mutate(&o)
			if err := o.validate(); (err != nil) != tt.wantErr {
				t.Fatalf("validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
