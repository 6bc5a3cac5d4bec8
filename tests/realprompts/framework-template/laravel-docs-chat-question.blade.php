Relevant Context:
{{ $context }}

User Question:
{{ $question }}
