package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// gitBuiltins are git's own commands (git 2.39, "git --list-cmds=main"):
// an alias of one of those names is never used.
var gitBuiltins = table[map[string]bool]{build: func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`add am annotate apply archive bisect blame branch bugreport bundle
		cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry
		cherry-pick citool clean clone column commit commit-graph commit-tree config count-objects
		credential credential-cache credential-store daemon describe diagnose diff diff-files diff-index
		diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
		for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep gui
		hash-object help hook http-backend http-fetch http-push imap-send index-pack init init-db
		instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge
		merge-base merge-file merge-index merge-octopus merge-one-file merge-ours merge-recursive
		merge-resolve merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes
		pack-objects pack-redundant pack-refs patch-id pickaxe prune prune-packed pull push quiltimport
		range-diff read-tree rebase receive-pack reflog remote repack replace request-pull rerere reset
		restore rev-list rev-parse revert rm send-email send-pack shell shortlog show show-branch
		show-index show-ref sparse-checkout stage stash status stripspace submodule subtree switch
		symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info
		upload-archive upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree
		write-tree`) {
		m[c] = true
	}
	return m
}}

// maxConfigIncludes bounds how deep configuration files include others
// (git's own limit is 10).
const maxConfigIncludes = 10

// gitAlias returns what alias name stands for in the configuration git
// reads for a repository at dir: the system file, the global files, the
// repository's own (the last one that sets it wins, as in git). known is
// false when a file that could set it could not be read to the end (an
// include of a path only known at run time, a file the gate cannot
// read): then what the alias runs is not known.
func gitAlias(name, dir, home string) (value string, found, known bool) {
	files := []string{"/etc/gitconfig"}
	if home != "" {
		files = append(files, filepath.Join(home, ".config/git/config"), filepath.Join(home, ".gitconfig"))
	}
	if gitDir, common := gitDirs(dir); gitDir != "" {
		files = append(files, filepath.Join(common, "config"), filepath.Join(gitDir, "config.worktree"))
	}
	known = true
	for _, f := range files {
		v, ok, k := configAlias(f, strings.ToLower(name), home, 0)
		known = known && k
		if ok {
			value, found = v, true
		}
	}
	return value, found, known
}

// gitDirs finds the repository dir is in: its git directory and the
// common directory (they differ in a linked worktree).
func gitDirs(dir string) (gitDir, common string) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if st, err := os.Stat(p); err == nil {
			gitDir = p
			if !st.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					return "", ""
				}
				g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return "", ""
				}
				gitDir = strings.TrimSpace(g)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(d, gitDir)
				}
			}
			common = gitDir
			if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				common = strings.TrimSpace(string(b))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gitDir, common)
				}
			}
			return gitDir, common
		}
		if d == "/" || d == "." {
			return "", ""
		}
	}
}

// configAlias reads alias.name from one configuration file and the files
// it includes. A missing file sets nothing and is known.
func configAlias(path, name, home string, depth int) (value string, found, known bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, os.IsNotExist(err)
	}
	defer f.Close()
	if depth > maxConfigIncludes {
		return "", false, false
	}
	known = true
	section := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var pending string
	for sc.Scan() {
		line := pending + sc.Text()
		pending = ""
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			pending = strings.TrimSuffix(line, "\\")
			continue
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			end := strings.IndexByte(t, ']')
			if end < 0 {
				return value, found, false
			}
			section = strings.ToLower(strings.TrimSpace(t[1:end]))
			t = strings.TrimSpace(t[end+1:])
		}
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		key, raw, eq := strings.Cut(t, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !eq {
			raw = "true"
		}
		v := configValue(raw)
		isInclude := key == "path" && (section == "include" || strings.HasPrefix(section, "includeif"))
		switch {
		case isInclude:
			p := v
			if rest, ok := strings.CutPrefix(p, "~/"); ok {
				p = filepath.Join(home, rest)
			} else if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(path), p)
			}
			iv, ifound, iknown := configAlias(p, name, home, depth+1)
			known = known && iknown
			if ifound {
				value, found = iv, true
			}
		case section == "alias" && key == name:
			value, found = v, true
		}
	}
	if sc.Err() != nil {
		known = false
	}
	return value, found, known
}

// configValue reads a configuration value as git does: quotes removed,
// the escapes \n \t \b \\ \" read, a comment outside quotes dropped,
// blanks at either end dropped outside quotes.
func configValue(raw string) string {
	var b strings.Builder
	quoted := false
	trail := 0 // unquoted blanks written at the end
	raw = strings.TrimLeft(raw, " \t")
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			quoted = !quoted
			trail = 0
			continue
		case !quoted && (c == '#' || c == ';'):
			i = len(raw)
			continue
		case c == '\\' && i+1 < len(raw):
			i++
			c = map[byte]byte{'n': '\n', 't': '\t', 'b': '\b'}[raw[i]]
			if c == 0 {
				c = raw[i]
			}
			trail = 0
		case !quoted && (c == ' ' || c == '\t'):
			trail++
			b.WriteByte(c)
			continue
		default:
			trail = 0
		}
		b.WriteByte(c)
	}
	s := b.String()
	return s[:len(s)-trail]
}

// gitAliasPrograms: "git NAME ARGS" where NAME is no git command runs
// what an alias of that name stands for ("!cmd" through the shell,
// otherwise another git command line), from the repository's, the
// global or the system configuration, with ARGS after it. Where a file
// that could define it cannot be read, what it runs is not known.
func (w *bashWalker) gitAliasPrograms(sub string, rest []shWord, in dirSet) {
	if gitBuiltins.get()[sub] || sub == "" || in.unknown {
		return
	}
	for _, d := range in.list {
		value, found, known := gitAlias(sub, d, w.home)
		via := "git alias." + sub
		switch {
		case !known:
			w.runsUnknown("{git alias."+sub+"}", via)
		case !found:
			continue
		case strings.HasPrefix(value, "!"):
			w.runLater(program{word: joinLine(append([]shWord{literalWord(value[1:])}, rest...)), shell: true, via: via}, dirSet{list: []string{d}})
		default:
			w.runLater(program{word: joinLine(append([]shWord{literalWord("git " + value)}, rest...)), shell: true, via: via}, dirSet{list: []string{d}})
		}
	}
}
