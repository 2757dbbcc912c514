# Run 35 call 12 (kind nvidia-h200-x2): the host loop's grain at 4 chunks per rank on tnlg-fc2-tp2 f32 (run 33: 0.86x with chunk grain).
. .gpu/prelude.sh; export NO_CALIBRATE=1 DTYPES=f32 PRESETS=tnlg-fc2-tp2 CHUNKS=4; mkdir -p $OUT/chunk $OUT/stage
OUT=$OUT/chunk timeout 130 bash scripts/device-run.sh twogpu
T3_HOST_GRAIN=stage OUT=$OUT/stage timeout 130 bash scripts/device-run.sh twogpu
