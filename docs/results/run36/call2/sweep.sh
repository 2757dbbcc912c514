# Run 36 call 2, first part: spares as the trigger on tnlg-op-tp8 f16, the number of spares and pieces (as many lanes per transfer as the link's 16 step workgroups: 64 pieces of 64 invocations).
P="--preset tnlg-op-tp8 --chunks 1"
W="T3_FUSED_TRIGGER=spares T3_FUSED_SPARE_DISPATCH=own T3_FUSED_PUT=coherent"
run s-enc sequential,encoded "$P --gemm-grid 128"
for s in 66 132 198 264 396; do
  run s-g132-p64-s$s sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_PIECES=64 T3_FUSED_SPARES=$s
done
run s-g132-p32-s132 sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_PIECES=32 T3_FUSED_SPARES=132
run s-g264-p64-s264 sequential,fused "$P" $W T3_FUSED_GRID=264 T3_FUSED_PIECES=64 T3_FUSED_SPARES=264
run s-g132-p64-s264-polls16 sequential,fused "$P" $W T3_FUSED_GRID=132 T3_FUSED_PIECES=64 T3_FUSED_SPARES=264 T3_FUSED_POLLS=16
