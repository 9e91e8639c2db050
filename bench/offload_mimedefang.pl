# MIMEDefang filter for bench/offload.sh: every attachment (a part with a file name) of at
# least $ENV{MD_MIN} bytes (decoded) replaced with a URL by action_replace_with_url.
sub filter {
    my($entity, $fname, $ext, $type) = @_;
    return if message_rejected();
    my $path = defined($entity->bodyhandle) ? $entity->bodyhandle->path : undef;
    if (defined($path) && $fname ne "" && -s $path >= $ENV{MD_MIN}) {
        return action_replace_with_url($entity, $ENV{MD_STORE}, "https://files.example.org",
                                "The attachment $fname was stored at _URL_", "", "salt");
    }
    return action_accept();
}
1;
