// Parser for the Python subset of SPEC.md §1 and §4: recursive descent over the
// tokens of lexer.h, building the AST of ast.h.
//
// Grammar accepted ([] optional, * repeated, | alternatives; NAME, NUMBER, STRING,
// NEWLINE, INDENT, DEDENT are tokens):
//
//   module      := stmt* END                     (a leading docstring is dropped)
//   stmt        := simple_stmts | if | while | for | funcdef | classdef | try | decorated
//   simple_stmts:= small_stmt (';' small_stmt)* [';'] NEWLINE
//   small_stmt  := expr_stmt | 'pass' | 'break' | 'continue' | 'return' [testlist]
//                | 'assert' test [',' test] | import | from_import
//                | 'raise' [test ['from' test]] | 'del' targetlist
//                | ('global' | 'nonlocal') NAME (',' NAME)*
//   expr_stmt   := testlist ( ('=' testlist)*          (chained: a = b = value)
//                           | augop testlist           (+= -= *= /= //= %= **= @= &= |= ^= >>= <<=)
//                           | ':' test ['=' testlist] )  (annotated; one target)
//   import      := 'import' dotted ['as' NAME] (',' dotted ['as' NAME])*
//   from_import := 'from' dotted 'import' ( names | '(' names [','] ')' )
//   names       := NAME ['as' NAME] (',' NAME ['as' NAME])*
//   if          := 'if' test ':' suite ('elif' test ':' suite)* ['else' ':' suite]
//   while       := 'while' test ':' suite
//   for         := 'for' targetlist 'in' testlist ':' suite
//   decorated   := ('@' test NEWLINE)+ (funcdef | classdef)
//   classdef    := 'class' NAME ['(' [test (',' test)* [',']] ')'] ':' suite
//   try         := 'try' ':' suite ('except' [test ['as' NAME]] ':' suite)*
//                  ['else' ':' suite] ['finally' ':' suite]   (one except or finally at least)
//   funcdef     := 'def' NAME '(' [param (',' param)* [',']] ')' ['->' test] ':' suite
//   param       := NAME [':' test] ['=' test] | '*' [NAME [':' test]] | '**' NAME [':' test]
//   suite       := simple_stmts | NEWLINE INDENT stmt+ DEDENT
//
//   testlist    := test (',' test)* [',']        (a tuple when there is a comma)
//   targetlist  := or_expr (',' or_expr)* [',']
//   test        := or_test ['if' or_test 'else' test] | lambda
//   lambda      := 'lambda' [lparam (',' lparam)*] ':' test
//   lparam      := NAME ['=' test] | '*' [NAME] | '**' NAME
//   or_test     := and_test ('or' and_test)*
//   and_test    := not_test ('and' not_test)*
//   not_test    := 'not' not_test | comparison
//   comparison  := or_expr (compop or_expr)*     (chained: a < b < c is one kCompare)
//   compop      := '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not' 'in' | 'is' ['not']
//   or_expr     := xor_expr ('|' xor_expr)*
//   xor_expr    := and_expr ('^' and_expr)*
//   and_expr    := shift ('&' shift)*
//   shift       := arith (('<<' | '>>') arith)*
//   arith       := term (('+' | '-') term)*
//   term        := factor (('*' | '@' | '/' | '//' | '%') factor)*
//   factor      := ('+' | '-' | '~') factor | power
//   power       := primary ['**' factor]         (right-assoc; -x**2 is -(x**2))
//   primary     := atom ( '(' [args] ')' | '[' subscripts ']' | '.' NAME )*
//   args        := arg (',' arg)* [',']          (positional before keyword)
//   arg         := test [comp_for] | NAME '=' test | '*' or_expr | '**' test
//   subscripts  := subscript (',' subscript)* [',']   (a kTuple index when there is a comma)
//   subscript   := test | [test] ':' [test] [':' [test]]
//   atom        := NAME | NUMBER | STRING+ | 'True' | 'False' | 'None' | '...'
//                | '(' [testlist | test comp_for] ')' | '[' [testlist | test comp_for] ']'
//                | '{' [test ':' test (',' test ':' test)* [',']] '}' | '{' test ':' test comp_for '}'
//   (an item of a testlist, of a list and of a subscript may be '*' or_expr)
//   comp_for    := ('for' targetlist 'in' or_test ('if' or_test)*)+
//
// The body of a module-level `if __name__ == "__main__":` (and of its elif/else
// clauses) is skipped without being tokenized, since eager-mode demos put any Python
// there; the kIf is kept with its test and an empty body and orelse.
// A leading string statement of a def becomes FunctionDef::docstring and is not
// kept in the body.
//
// Errors: the first syntax error stops the parse. Constructs outside the subset
// (with, async, await, yield,
// positional-only parameters, starred assignment targets, set literals, set
// comprehensions, while/for ... else) are reported at their keyword and
// parsing goes on, so one run lists them all.
#pragma once

#include <cstdint>
#include <memory>

#include "ast.h"
#include "diagnostics.h"

namespace sg::compiler {

// Parses one file of the Python subset; null when there were errors (reported to diags).
std::unique_ptr<Module> parse_module(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

}  // namespace sg::compiler
