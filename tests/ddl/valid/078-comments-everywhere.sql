/* leading
   block comment */
-- line comment
CREATE /* a */ TABLE -- b
  /* c */ commented /* d */ ( -- e
  a /* f */ INT /* g */ , -- h
  b AS a /* i */ + /* j */ 1 -- k
  , c STRING COMMENT 'not -- a comment /* nor this */'
) /* l */ WITH ( -- m
  'k' /* n */ = /* o */ 'v -- kept' -- p
) /* q */ ; -- trailing comment
/* and a last one */
