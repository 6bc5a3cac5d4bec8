Given the query: "{{ $query }}"
Rerank the following results in order of most to least relevant:
{!!$context!!}
