package scidb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// Format-string error kinds, for errors.Is on a *FormatStringError. The SciDB
// error each one stands for is named in its text.
//
// A syntax error is layout.ErrSyntax, the sentinel every format's text
// shares; the kind of a *FormatStringError wraps it as SciDB's
// SCIDB_LE_TEMPLATE_PARSE_ERROR.
var (
	errTemplateSyntax    = fmt.Errorf("%w (SCIDB_LE_TEMPLATE_PARSE_ERROR)", layout.ErrSyntax)
	ErrFixedSizeWidth    = errors.New("width on a fixed-size type (SCIDB_LE_TEMPLATE_FIXED_SIZE_TYPE)")
	ErrUnknownType       = errors.New("type is not registered (SCIDB_LE_TYPE_NOT_REGISTERED)")
	ErrUnsupportedFormat = fmt.Errorf("not a binary format string (SCIDB_LE_UNSUPPORTED_FORMAT): %w", errors.ErrUnsupported)
	// ErrOpaque is both the format-string kind of "opaque" and the error
	// of reading an opaque backup file as a binary template file.
	ErrOpaque = fmt.Errorf("opaque SciDB format: %w", errors.ErrUnsupported)
)

// FormatStringError reports a format string SciDB would refuse.
type FormatStringError struct {
	Format string // the format string
	Pos    int    // SciDB's position: just past the offending token, or an illegal character's index
	Entry  int    // 1-based entry the error is in; 0 if none
	Kind   error  // wrapping layout.ErrSyntax; or ErrFixedSizeWidth, ErrUnknownType, ErrUnsupportedFormat or ErrOpaque
	Msg    string // what is wrong, e.g. "empty entry"
}

func (e *FormatStringError) Error() string {
	var b strings.Builder
	b.WriteString("scidb: format ")
	b.WriteString(strconv.Quote(e.Format))
	b.WriteString(": position ")
	b.WriteString(strconv.Itoa(e.Pos))
	if e.Entry > 0 {
		b.WriteString(", entry ")
		b.WriteString(strconv.Itoa(e.Entry))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns Kind.
func (e *FormatStringError) Unwrap() error { return e.Kind }

type token uint8

const (
	tokEOF token = iota
	tokIdent
	tokLPar
	tokRPar
	tokComma
	tokNumber
	tokIllegal
)

// scanner is SciDB's TemplateScanner: whitespace (C isspace) is skipped
// before each token, and pos ends just past the token read, or at an
// illegal character (which is not consumed).
type scanner struct {
	s     string
	pos   int
	start int    // where the last token began
	ident string // last identifier
	num   uint64 // last number, saturated above maxWidth
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func (sc *scanner) next() token {
	for sc.pos < len(sc.s) && isSpace(sc.s[sc.pos]) {
		sc.pos++
	}
	sc.start = sc.pos
	if sc.pos == len(sc.s) {
		return tokEOF
	}
	c := sc.s[sc.pos]
	switch {
	case c == '(':
		sc.pos++
		return tokLPar
	case c == ')':
		sc.pos++
		return tokRPar
	case c == ',':
		sc.pos++
		return tokComma
	case isDigit(c):
		sc.num = 0
		for sc.pos < len(sc.s) && isDigit(sc.s[sc.pos]) {
			if sc.num <= maxWidth {
				sc.num = sc.num*10 + uint64(sc.s[sc.pos]-'0')
			}
			sc.pos++
		}
		return tokNumber
	case isAlpha(c):
		for sc.pos < len(sc.s) && (isAlpha(sc.s[sc.pos]) || isDigit(sc.s[sc.pos]) || sc.s[sc.pos] == '_') {
			sc.pos++
		}
		sc.ident = sc.s[sc.start:sc.pos]
		return tokIdent
	}
	return tokIllegal
}

// maxWidth is the largest N of an (N) form: SciDB holds N in an int.
const maxWidth = 2147483647

// ParseFormat parses a SciDB binary format string ("template") such as
// "(int8, int16 null, string null, string)", following SciDB's
// TemplateParser: type names are case-sensitive, "skip" and "null" are not,
// "null" is the only nullability keyword, and the first character must be
// "(". Errors are *FormatStringError values naming the position SciDB would
// report.
func ParseFormat(s string) (*Schema, error) {
	fail := func(pos, entry int, kind error, msg string) (*Schema, error) {
		return nil, &FormatStringError{Format: s, Pos: pos, Entry: entry, Kind: kind, Msg: msg}
	}
	if strings.EqualFold(s, "opaque") {
		return fail(0, 0, ErrOpaque, "the opaque backup format is not a binary format string; use '(…)'")
	}
	if s == "" {
		return fail(0, 0, ErrUnsupportedFormat, "empty format string")
	}
	if s[0] != '(' {
		return fail(0, 0, ErrUnsupportedFormat, "a binary format string starts with '('")
	}
	sc := &scanner{s: s}
	sc.next() // the '('
	f := &Schema{}
	for entry := 1; ; entry++ {
		tok := sc.next()
		if tok != tokIdent {
			return fail(sc.errPos(tok), entry, errTemplateSyntax, unexpected(tok, sc, "a type name"))
		}
		col := Column{Pos: sc.start}
		name := sc.ident
		if strings.EqualFold(name, "skip") {
			col.Type = TypeSkip
		} else {
			t, ok := typeByName[name]
			if !ok {
				return fail(sc.pos, entry, ErrUnknownType, fmt.Sprintf("type %q is not registered", name))
			}
			col.Type = t
		}
		tok = sc.next()
		if tok == tokLPar {
			tok = sc.next()
			if tok != tokNumber {
				return fail(sc.errPos(tok), entry, errTemplateSyntax, unexpected(tok, sc, "a width"))
			}
			if sc.num == 0 {
				return fail(sc.pos, entry, errTemplateSyntax, "width 0")
			}
			if sc.num > maxWidth {
				return fail(sc.pos, entry, errTemplateSyntax, "width "+sc.s[sc.start:sc.pos]+" exceeds 2147483647")
			}
			if col.Type.Size() > 0 {
				return fail(sc.pos, entry, ErrFixedSizeWidth, fmt.Sprintf("fixed-size type %s takes no width", col.Type))
			}
			col.Width = uint32(sc.num)
			if tok = sc.next(); tok != tokRPar {
				return fail(sc.errPos(tok), entry, errTemplateSyntax, unexpected(tok, sc, "')'"))
			}
			tok = sc.next()
		}
		if tok == tokIdent && strings.EqualFold(sc.ident, "null") {
			col.Nullable = true
			tok = sc.next()
		}
		f.Columns = append(f.Columns, col)
		if tok == tokRPar {
			break
		}
		if tok != tokComma {
			return fail(sc.errPos(tok), entry, errTemplateSyntax, unexpected(tok, sc, "',' or ')'"))
		}
	}
	if tok := sc.next(); tok != tokEOF {
		return fail(sc.errPos(tok), 0, errTemplateSyntax, unexpected(tok, sc, "the end"))
	}
	f.finish()
	return f, nil
}

// errPos is SciDB's position for an unexpected token: past it, or at an
// illegal character.
func (sc *scanner) errPos(tok token) int {
	if tok == tokIllegal {
		return sc.start
	}
	return sc.pos
}

func unexpected(tok token, sc *scanner, want string) string {
	var got string
	switch tok {
	case tokEOF:
		return "unexpected end, want " + want
	case tokIllegal:
		return fmt.Sprintf("illegal character %q", sc.s[sc.start])
	case tokRPar, tokComma:
		if want == "a type name" {
			return "empty entry"
		}
		got = "'" + string(sc.s[sc.start]) + "'"
	case tokLPar:
		got = "'('"
	case tokNumber, tokIdent:
		got = strconv.Quote(sc.s[sc.start:sc.pos])
	}
	return got + " where " + want + " belongs"
}
