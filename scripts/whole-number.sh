# Sourced by the scripts that take a number from the environment (fuzz.sh, soak.sh).
# whole_number WHO NAME VALUE MIN MAX UNIT prints VALUE as a decimal integer when it is a whole
# number from MIN to MAX; otherwise it says so on stderr, naming NAME, and fails with status 2:
#   seconds=$(whole_number fuzz FUZZ_SECONDS "$seconds" 1 604800 seconds) || exit 2
whole_number() {
    local who=$1 name=$2 value=$3 min=$4 max=$5 unit=$6
    if [[ "$value" =~ ^[0-9]{1,9}$ ]] && (( 10#$value >= min && 10#$value <= max )); then
        echo "$(( 10#$value ))"
        return 0
    fi
    echo "$who: $name=$value: must be a whole number of $unit from $min to $max" >&2
    return 2
}
